/**
 * The reconciler as the tests drive it: a memory store, connections whose clients are one fake
 * manager, a settable clock; `pass(object)` runs one reconcile and writes the status back, as the
 * status sink would, after checking it against the CRDs as the API server does.
 */
import { realClock } from "../../src/util/clock.ts";
import type { Condition, NsxvObject, Secret } from "../../src/api/types.ts";
import { refOf } from "../../src/api/refs.ts";
import { ResourceValidator } from "../../src/api/schema.ts";
import type { ManagerClientOptions } from "../../src/nsx/client.ts";
import { ManagerConnections } from "../../src/reconcile/connections.ts";
import { createReconciler, type ReconcilerDeps } from "../../src/reconcile/reconciler.ts";
import type { ReconcileReport } from "../../src/reconcile/report.ts";
import { memoryStore, type DesiredStateStore } from "../../src/reconcile/store.ts";
import { edgeXml } from "./edge-tenant/fixtures.ts";
import { fakeManager, T0, type FakeManager } from "./fixtures.ts";
import { allocations, pool } from "./ip-pool/fixtures.ts";
import { credentials } from "./nsx-manager/fixtures.ts";

export const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");

/** the CRDs' schemas: a status the API server would refuse (422) fails the test that wrote it */
const crds = ResourceValidator.load();

export function setup(init: {
  objects: NsxvObject[];
  secrets?: Secret[];
  fake?: FakeManager;
  deps?: Partial<ReconcilerDeps>;
  /** false: the store offers no revision (the reconciler lists on every use) */
  revisions?: boolean;
  /** the store's Secrets must name the manager URLs they may go to (a cluster's) */
  secretBindingRequired?: boolean;
  /** the store's Secrets can be held with a finalizer (a cluster's) */
  secretsHoldable?: boolean;
  /** the labels of each namespace, as a cluster's store knows them; absent: a store that knows none (a directory) */
  namespaceLabels?: Record<string, Record<string, string>>;
}) {
  const store = memoryStore({ objects: init.objects, secrets: init.secrets ?? [credentials()] });
  const fake =
    init.fake ??
    fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
  const clients: { options: ManagerClientOptions; closed: boolean }[] = [];
  const connections = new ManagerConnections({
    createClient: (options) => {
      const entry = { options, closed: false };
      clients.push(entry);
      const close = async (): Promise<void> => void (entry.closed = true);
      return { ...fake.api, close, destroy: close };
    },
  });
  // settable; its timers are real ones (a pass's wait on the manager is bounded in real time)
  const clock = { ms: T0.getTime(), now: () => clock.ms, setTimer: realClock.setTimer };
  /** the kinds the reconciler listed, in order: each list is a build of the conflict index */
  const listed: string[] = [];
  const { revision, ...rest } = store;
  const counted: DesiredStateStore = {
    ...rest,
    ...(init.revisions === false ? {} : { revision }),
    ...(init.secretBindingRequired === true ? { secretBindingRequired: true } : {}),
    ...(init.secretsHoldable === true ? { secretsHoldable: true } : {}),
    ...(init.namespaceLabels === undefined
      ? {}
      : { namespaceLabels: (ns: string) => init.namespaceLabels?.[ns], namespacesRevision: () => 0 }),
    list: (kind) => (listed.push(kind), store.list(kind)),
  };
  const reconcile = createReconciler({
    store: counted,
    connections,
    clock,
    random: () => 0.5,
    ...init.deps,
  });
  /** one reconcile; the status it returns is written back, as the status sink would */
  const pass = async (object: NsxvObject): Promise<ReconcileReport> => {
    const ref = refOf(object);
    const report = await reconcile(ref);
    const current = store.get(ref) as NsxvObject;
    if (report.status !== undefined) {
      const written = { ...current, status: report.status } as NsxvObject;
      // only status: some tests hand the reconciler a spec the API server would refuse on purpose
      const issues = crds.validate(written.kind, written).issues.filter((i) => i.path[0] === "status");
      if (issues.length > 0) {
        throw new Error(`the API server would refuse this status: ${JSON.stringify(issues)}`);
      }
      store.put(written);
    }
    return report;
  };
  return { store, fake, clients, clock, reconcile, pass, listed };
}

export const condition = (report: ReconcileReport, type: string): Condition | undefined =>
  report.status?.conditions?.find((c) => c.type === type);
