import { describe, expect, it } from "vitest";
import { refOf } from "../../src/api/refs.ts";
import type { Condition, NSXManagerStatus, NsxvObject, Secret } from "../../src/api/types.ts";
import { NsxTransportError } from "../../src/nsx/errors.ts";
import { phaseOf } from "../../src/reconcile/edge-tenant/full-read-schedule.ts";
import { RECONCILER_DEFAULTS } from "../../src/reconcile/reconciler.ts";
import { condition, iso, setup } from "./harness.ts";
import { edgeTenant, withOriginal } from "./edge-tenant/fixtures.ts";
import { apiError, at, count, fakeManager, MINUTE, T0 } from "./fixtures.ts";
import { allocationIdOf, allocations, pool, poolAllocations } from "./ip-pool/fixtures.ts";
import { credentials, manager } from "./nsx-manager/fixtures.ts";

describe("NSXManager", () => {
  it("checks reachability and credentials with the pool list of globalroot-0", async () => {
    const { fake, pass } = setup({ objects: [manager()] });
    const report = await pass(manager());
    expect(fake.calls).toEqual(["listPools globalroot-0"]);
    expect(report.status).toEqual({
      reachable: true,
      authenticated: true,
      observedGeneration: 1,
      conditions: expect.any(Array),
    });
    expect(condition(report, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(report.outcome).toEqual({ type: "done", requeueAfterMs: 300_000 });
  });

  it.each([
    {
      name: "Unauthorized",
      reason: "a 401 means reachable but the credentials are refused",
      fault: apiError(401, "GET", "/api/2.0/services/ipam/pools/scope/globalroot-0"),
      want: { reachable: true, authenticated: false },
      ready: "Unauthorized",
    },
    {
      name: "Forbidden",
      reason: "a 403 means the credentials work but lack rights",
      fault: apiError(403, "GET", "/api/2.0/services/ipam/pools/scope/globalroot-0"),
      want: { reachable: true, authenticated: true },
      ready: "Unauthorized",
    },
    {
      name: "Unreachable",
      reason: "no answer at all",
      fault: new NsxTransportError({
        method: "GET",
        path: "/api",
        reason: "connect ECONNREFUSED",
        notSent: true,
      }),
      want: { reachable: false },
      ready: "Unreachable",
    },
  ])("reports $name", async ({ reason, fault, want, ready }) => {
    const { fake, pass } = setup({ objects: [manager()] });
    fake.faults.listPools = [fault];
    const report = await pass(manager());
    expect(report.status, reason).toMatchObject(want);
    expect(condition(report, "Ready"), reason).toMatchObject({ status: "False", reason: ready });
    expect(condition(report, "Synced"), reason).toMatchObject({ status: "False", reason: ready });
    expect(report.outcome, reason).toMatchObject({ type: "failed", error: { terminal: false } });
    expect(report.events, reason).toEqual([expect.objectContaining({ type: "Warning", reason: ready })]);
  });

  it("reports a missing Secret as ManagerNotReady without creating a client", async () => {
    const { clients, fake, pass } = setup({ objects: [manager()], secrets: [] });
    const report = await pass(manager());
    expect(condition(report, "Ready")).toMatchObject({
      status: "False",
      reason: "ManagerNotReady",
      message: "Secret ns/nsx-creds not found",
    });
    expect(clients).toHaveLength(0);
    expect(fake.calls).toEqual([]);
  });

  describe("credentials bound to their destination, and how it is reached (a cluster's Secrets)", () => {
    const bound = (urls: string, more: Record<string, string> = {}) => {
      const secret = credentials();
      return {
        ...secret,
        metadata: { ...secret.metadata, annotations: { "nsxv.io/allowed-manager-urls": urls, ...more } },
      };
    };
    const caSecret = {
      ...credentials("nsx-ca", { "ca.crt": "-----BEGIN CERTIFICATE-----" }),
    };
    it.each([
      {
        name: "Unbound",
        reason: "a Secret that names no manager sends its credentials nowhere",
        secret: credentials(),
        connects: false,
      },
      {
        name: "BoundElsewhere",
        reason: "the NSXManager points at a URL the Secret does not name (someone else's server)",
        secret: bound("https://nsx-a.example, https://nsx-b.example"),
        connects: false,
      },
      {
        name: "BoundHere",
        reason: "the URL the NSXManager names is one the Secret allows",
        secret: bound("https://nsx-a.example https://nsx.example"),
        connects: true,
      },
      {
        name: "BoundNormalized",
        reason:
          "URLs compare as the manager they name: host case, default port and a trailing slash do not count",
        secret: bound("HTTPS://NSX.example:443/"),
        connects: true,
      },
      {
        name: "BoundPathCounts",
        reason: "a path is part of where the credentials go (a proxy may route by it)",
        secret: bound("https://nsx.example/other"),
        connects: false,
      },
      {
        name: "PlainHttpNotConsented",
        reason: "the owner bound https: the same host over plain http is another destination",
        secret: bound("https://nsx.example"),
        spec: { url: "http://nsx.example" },
        connects: false,
      },
      {
        name: "PlainHttpConsented",
        reason: "an http:// URL in the binding is the owner's consent to plain HTTP there",
        secret: bound("http://nsx.example"),
        spec: { url: "http://nsx.example" },
        connects: true,
      },
      {
        name: "InsecureNotConsented",
        reason:
          "skipping certificate verification is the Secret owner's decision, not the NSXManager author's: an impostor at the URL would get the credentials",
        secret: bound("https://nsx.example"),
        spec: { tls: { insecureSkipVerify: true } },
        connects: false,
      },
      {
        name: "InsecureConsented",
        reason: "the owner consents in the Secret itself",
        secret: bound("https://nsx.example", { "nsxv.io/allow-insecure-skip-verify": "true" }),
        spec: { tls: { insecureSkipVerify: true } },
        connects: true,
      },
      {
        name: "InsecureConsentIsTrueOnly",
        reason: "any other value is no consent",
        secret: bound("https://nsx.example", { "nsxv.io/allow-insecure-skip-verify": "yes" }),
        spec: { tls: { insecureSkipVerify: true } },
        connects: false,
      },
      {
        name: "OtherCaNotAllowed",
        reason: "a CA decides who can pose as the manager: one of another Secret needs the owner's word",
        secret: bound("https://nsx.example"),
        spec: { tls: { caSecretRef: { name: "nsx-ca", key: "ca.crt" } } },
        connects: false,
      },
      {
        name: "OtherCaAllowed",
        reason: "the owner names the CA Secret it trusts",
        secret: bound("https://nsx.example", { "nsxv.io/allowed-ca-secrets": "other, nsx-ca" }),
        spec: { tls: { caSecretRef: { name: "nsx-ca", key: "ca.crt" } } },
        connects: true,
      },
      {
        name: "CaInTheSecretItself",
        reason: "a CA held in the credentials Secret is its owner's",
        secret: {
          ...bound("https://nsx.example"),
          stringData: { ...credentials().stringData, "ca.crt": "pem" },
        },
        spec: { tls: { caSecretRef: { name: "nsx-creds", key: "ca.crt" } } },
        connects: true,
      },
    ])("$name: $reason", async ({ secret, spec, connects }) => {
      const nsx = manager(spec);
      const { clients, fake, pass } = setup({
        objects: [nsx],
        secrets: [secret, caSecret],
        secretBindingRequired: true,
      });
      const report = await pass(nsx);
      expect(clients.length > 0, "a client is built only for a bound URL").toBe(connects);
      expect(fake.calls.length > 0).toBe(connects);
      if (connects) expect(condition(report, "Ready")).toMatchObject({ status: "True" });
      else {
        expect(condition(report, "Ready")).toMatchObject({ status: "False", reason: "CredentialsNotBound" });
        expect(condition(report, "Stalled"), "a person binds it").toMatchObject({ status: "True" });
        const message = condition(report, "Ready")?.message ?? "";
        expect(message).toContain("Whoever owns the Secret decides");
        expect(message, "no ready command that binds the Secret to what the NSXManager names").not.toMatch(
          /kubectl|annotate secret/,
        );
        expect(JSON.stringify(report), "the password is never said").not.toContain("s3cret");
      }
    });

    it("does not apply to Secrets of manifest files, whose author holds them anyway", async () => {
      const { clients, pass } = setup({ objects: [manager()] });
      await pass(manager());
      expect(clients).toHaveLength(1);
    });
  });

  it("writes no status on a check that found nothing new: only a timestamp would have moved", async () => {
    const { pass, clock } = setup({ objects: [manager()] });
    expect((await pass(manager())).status).toBeDefined();
    clock.ms += 300_000;
    const again = await pass(manager());
    expect(
      again.status,
      "the next check, five minutes later, changes nothing a reader cares about",
    ).toBeUndefined();
  });

  it("checks with a fresh pool list every time: a check is never served from the dependents' cache", async () => {
    const { fake, pass } = setup({ objects: [manager()] });
    await pass(manager());
    await pass(manager());
    expect(fake.calls).toEqual(["listPools globalroot-0", "listPools globalroot-0"]);
  });

  it("spreads the resync by ±10 %", async () => {
    for (const [random, want] of [
      [0, 270_000],
      [0.5, 300_000],
      [0.999_999, 330_000],
    ] as const) {
      const { pass } = setup({ objects: [manager()], deps: { random: () => random } });
      expect((await pass(manager())).outcome, `random ${random}`).toEqual({
        type: "done",
        requeueAfterMs: want,
      });
    }
  });
});

describe("the NSXManager's in-use finalizer", () => {
  const deleting = (finalizers = ["nsxv.io/in-use"]) =>
    manager({}, { deletionTimestamp: "2024-05-01T12:00:00Z", finalizers });

  it("is held while an object names the manager, and not without one", async () => {
    const used = setup({ objects: [manager(), edgeTenant()] });
    expect((await used.pass(manager())).finalizer).toEqual({ name: "nsxv.io/in-use", present: true });
    const alone = setup({ objects: [manager({}, { finalizers: ["nsxv.io/in-use"] })] });
    expect((await alone.pass(manager())).finalizer).toEqual({ name: "nsxv.io/in-use", present: false });
  });

  it("keeps a deleted manager, checked, while objects still name it (a restore may be pending)", async () => {
    const { fake, pass } = setup({
      objects: [deleting(), edgeTenant({}, { deletionTimestamp: "2024-05-01T12:00:00Z" })],
    });
    const report = await pass(deleting());
    expect(report.finalizer, "kept").toBeUndefined();
    expect(fake.calls, "still checked: its dependents use it").toEqual(["listPools globalroot-0"]);
    expect(condition(report, "Ready")).toMatchObject({ status: "True" });
  });

  it("lets a deleted manager go, without a call, once no object names it", async () => {
    const { fake, pass } = setup({ objects: [deleting()] });
    const report = await pass(deleting());
    expect(report.finalizer).toEqual({ name: "nsxv.io/in-use", present: false });
    expect(fake.calls).toEqual([]);
  });
});

describe("the manager's Secrets held while a restore may need them (a cluster)", () => {
  /** an EdgeTenant that corrected its edge and remembers the original, for deletionPolicy Restore */
  const restoring = (m: Parameters<typeof edgeTenant>[1] = {}) => ({
    ...withOriginal(
      edgeTenant({ deletionPolicy: "Restore" }, { finalizers: ["nsxv.io/restore-tenant"], ...m }),
      "red",
    ),
  });
  const held = (name = "nsx-creds"): Secret => {
    const secret = credentials(name);
    return { ...secret, metadata: { ...secret.metadata, finalizers: ["nsxv.io/in-use"] } };
  };
  const ca = (): Secret => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "nsx-ca", namespace: "ns" },
    stringData: { "ca.crt": "-----BEGIN CERTIFICATE-----" },
  });

  it("holds its credentials and CA once an EdgeTenant that names it remembers an original, and says so in status", async () => {
    const withCa = manager({ tls: { caSecretRef: { name: "nsx-ca", key: "ca.crt" } } });
    const { pass } = setup({
      objects: [withCa, restoring()],
      secrets: [credentials(), ca()],
      secretsHoldable: true,
    });
    const report = await pass(withCa);
    expect(report.secretFinalizers).toEqual([
      { namespace: "ns", name: "nsx-ca", present: true },
      { namespace: "ns", name: "nsx-creds", present: true },
    ]);
    expect(report.status).toMatchObject({ heldSecrets: ["nsx-ca", "nsx-creds"] });
  });

  it.each([
    { name: "NoRestore", reason: "an Orphan object restores nothing", objects: () => [edgeTenant()] },
    {
      name: "NothingRecorded",
      reason: "a Restore object that never corrected its edge has nothing to restore",
      objects: () => [edgeTenant({ deletionPolicy: "Restore" }, { finalizers: ["nsxv.io/restore-tenant"] })],
    },
  ])("does not hold them when no restore may need them: $name", async ({ objects, reason }) => {
    const { pass } = setup({ objects: [manager(), ...objects()], secretsHoldable: true });
    const report = await pass(manager());
    expect(report.secretFinalizers, reason).toEqual([]);
    expect((report.status as NSXManagerStatus | undefined)?.heldSecrets, reason).toBeUndefined();
  });

  it("releases them once the last restore is done, even while the manager is deleted", async () => {
    const deleting = manager(
      {},
      { deletionTimestamp: "2024-05-01T12:00:00Z", finalizers: ["nsxv.io/in-use"] },
    );
    const object = { ...deleting, status: { heldSecrets: ["nsx-creds"] } };
    const { pass } = setup({ objects: [object], secrets: [held()], secretsHoldable: true });
    const report = await pass(object);
    expect(report.secretFinalizers).toEqual([{ namespace: "ns", name: "nsx-creds", present: false }]);
    expect(report.finalizer, "and then the manager goes").toEqual({ name: "nsxv.io/in-use", present: false });
  });

  it("keeps a Secret another NSXManager of the namespace reads while that one's restores may need it", async () => {
    const other = manager({}, { name: "nsx-b" });
    const mine = { ...manager(), status: { heldSecrets: ["nsx-creds"] } };
    const { pass } = setup({
      objects: [mine, other, restoring({ name: "b-edge" })].map((o) =>
        o.kind === "EdgeTenant" ? { ...o, spec: { ...o.spec, managerRef: { name: "nsx-b" } } } : o,
      ),
      secrets: [held()],
      secretsHoldable: true,
    });
    const report = await pass(mine);
    expect(report.secretFinalizers, "still held: nsx-b's restore needs it").toEqual([]);
    expect(
      (report.status as NSXManagerStatus | undefined)?.heldSecrets,
      "not this manager's to hold",
    ).toBeUndefined();
  });

  it("releases the Secret it read before its spec moved to another one", async () => {
    const moved = {
      ...manager({ credentialsSecretRef: { name: "new-creds" } }),
      status: { heldSecrets: ["nsx-creds"] },
    };
    const { pass } = setup({
      objects: [moved, restoring()],
      secrets: [held(), credentials("new-creds")],
      secretsHoldable: true,
    });
    const report = await pass(moved);
    expect(report.secretFinalizers).toEqual([
      { namespace: "ns", name: "new-creds", present: true },
      { namespace: "ns", name: "nsx-creds", present: false },
    ]);
    expect((report.status as NSXManagerStatus | undefined)?.heldSecrets).toEqual(["new-creds"]);
  });

  it("a Restore correction waits until its manager holds its Secrets, and asks for the manager's pass", async () => {
    const object = withOriginal(
      edgeTenant({ deletionPolicy: "Restore" }, { finalizers: ["nsxv.io/restore-tenant"] }),
      "red",
    );
    const { fake, pass, store } = setup({ objects: [manager(), object], secretsHoldable: true });
    const waiting = await pass(object);
    expect(fake.puts, "no write yet").toHaveLength(0);
    expect(condition(waiting, "Ready")).toMatchObject({ status: "False", reason: "CorrectionPending" });
    expect(condition(waiting, "Reconciling")?.message).toMatch(/holds its Secrets against deletion/);
    expect(waiting.wake).toEqual([{ kind: "NSXManager", namespace: "ns", name: "nsx" }]);
    expect(waiting.outcome).toEqual({ type: "done", requeueAfterMs: 1_000 });
    store.put({ ...manager(), status: { heldSecrets: ["nsx-creds"] } });
    const written = await pass(object);
    expect(fake.puts, "held: corrected").toHaveLength(1);
    expect(condition(written, "Ready")).toMatchObject({ status: "True" });
  });

  it("does not wait where Secrets cannot be held (manifest files)", async () => {
    const object = withOriginal(
      edgeTenant({ deletionPolicy: "Restore" }, { finalizers: ["nsxv.io/restore-tenant"] }),
      "red",
    );
    const { fake, pass } = setup({ objects: [manager(), object] });
    await pass(object);
    expect(fake.puts).toHaveLength(1);
  });
});

describe("dependents", () => {
  it("correct the tenant, record it, and come back only when its full read falls due: its manager's list follows it", async () => {
    const object = withOriginal(edgeTenant({ syncInterval: "1m" }), "red");
    const { fake, pass } = setup({ objects: [manager(), object] });
    const report = await pass(object);
    expect(fake.calls, "the read that decided the write is the pre-write read").toEqual([
      "listEdges",
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "red", to: "blue" }]);
    expect(report.events).toEqual([
      {
        type: "Normal",
        reason: "UpdatedEdgeTenant",
        message: 'tenant of edge-1 changed from "red" to "blue"',
      },
    ]);
    // read in full now, this replica's first look: the next full read at its phase of the hour after it
    const dueMs = phaseOf(object) * RECONCILER_DEFAULTS.kinds.EdgeTenant.fullReadIntervalMs;
    expect(report.outcome, "not the 1 min resync: the list wakes it").toMatchObject({
      type: "done",
      routine: true,
    });
    const outcome = report.outcome as { requeueAfterMs: number };
    expect(Math.abs(outcome.requeueAfterMs - dueMs)).toBeLessThanOrEqual(1);
    await pass(manager()); // its next check lists the edges
    const again = await pass(object);
    expect(again.status, "the next pass sees the version the PUT made").toMatchObject({ edgeVersion: 8 });
    expect(again.changes.tenantCorrections).toEqual([]);
    const third = await pass(object);
    expect(third.status, "in sync and nothing changed: nothing to write").toBeUndefined();
    expect(count(fake.calls, "putEdge"), "one write in three passes").toBe(1);
  });

  it("release due strays, report them, and ask to come back when the next stray is due", async () => {
    const object = poolAllocations({ allowed: ["10.0.0.1"], release: { minStrayAge: "2m" } });
    const { fake, clock, pass } = setup({ objects: [manager(), object] });
    fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.1", ["10.0.0.7", "ctl-3"]));
    const first = await pass(object);
    expect(first.outcome, "the stray becomes due in 2m").toEqual({
      type: "done",
      requeueAfterMs: 2 * MINUTE,
    });
    expect(condition(first, "Reconciling")).toMatchObject({ status: "True", reason: "ReleasesPending" });
    clock.ms = at(2 * MINUTE).getTime();
    const second = await pass(object);
    expect(second.changes.releases, "the allocation released, by its id and note").toEqual([
      { poolId: "ipaddresspool-1", ip: "10.0.0.7", allocationId: allocationIdOf("10.0.0.7"), note: "ctl-3" },
    ]);
    expect(second.events).toEqual([
      {
        type: "Normal",
        reason: "ReleasedAddress",
        message: 'released 10.0.0.7 from pool ipaddresspool-1 (note "ctl-3")',
      },
    ]);
    expect(condition(second, "Ready")).toMatchObject({ status: "True", reason: "InSync" });
    expect(condition(second, "Reconciling"), "present only while true").toBeUndefined();
  });

  it("report a release answered false as an error, keeping the releases that worked", async () => {
    const object = poolAllocations({ allowed: [], release: { minStrayAge: "0" } });
    const { fake, pass } = setup({ objects: [manager(), object] });
    fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.7", "10.0.0.8"));
    fake.faults.releaseAddress = [{ released: true, answer: "true" }, false];
    const report = await pass(object);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: { reason: "ReleaseFailed", terminal: false },
    });
    expect(report.status).toMatchObject({ released: [{ ip: "10.0.0.7" }], stray: [{ ip: "10.0.0.8" }] });
    expect(condition(report, "Synced")).toMatchObject({ status: "False", reason: "ReleaseFailed" });
    expect(report.events.map((e) => e.reason)).toEqual(["ReleasedAddress", "ReleaseFailed"]);
  });

  it.each([
    {
      name: "ManagerMissing",
      reason: "the NSXManager does not exist",
      objects: [],
      secrets: [credentials()],
      message: "NSXManager ns/nsx: not found",
    },
    {
      name: "ManagerAuthFailed",
      reason: "the NSXManager's own check failed authentication",
      objects: [{ ...manager(), status: { authenticated: false } }],
      secrets: [credentials()],
      message: "NSXManager ns/nsx: its last check failed to authenticate",
    },
    {
      name: "ManagerUnreachable",
      reason: "the NSXManager's own check could not reach it: a dependent would wait out the same timeout",
      objects: [{ ...manager(), status: { reachable: false } }],
      secrets: [credentials()],
      message: "NSXManager ns/nsx: its last check could not reach it",
    },
    {
      name: "SecretMissing",
      reason: "the manager's Secret does not exist",
      objects: [manager()],
      secrets: [],
      message: "NSXManager ns/nsx: Secret ns/nsx-creds not found",
    },
  ] as { name: string; reason: string; objects: NsxvObject[]; secrets: Secret[]; message: string }[])(
    "wait for a ready manager: $name",
    async ({ reason, objects, secrets, message }) => {
      const object = edgeTenant();
      const { fake, pass } = setup({ objects: [...objects, object], secrets });
      const report = await pass(object);
      expect(fake.calls, `${reason}: no manager calls`).toEqual([]);
      expect(condition(report, "Synced"), reason).toMatchObject({
        status: "False",
        reason: "ManagerNotReady",
        message,
      });
      expect(condition(report, "Ready"), `${reason}: never observed, not Ready`).toMatchObject({
        status: "False",
        reason: "ManagerNotReady",
      });
      expect(report.outcome, reason).toMatchObject({ type: "failed", error: { terminal: false } });
    },
  );

  it.each([
    {
      name: "ObservedThisGeneration",
      reason: "the latest observation was of this generation and matched: Ready stays",
      readyGeneration: 1,
      previousReady: { status: "True", reason: "InSync" },
      // this replica looked at it a minute ago (paused: it makes no observation of its own)
      lookedAtMinutesAgo: 1,
      want: { status: "True", reason: "InSync" },
      // back when it goes stale: two sync intervals (10 min) after that
      requeueAfterMs: 9 * MINUTE + 1,
    },
    {
      name: "DriftedThisGeneration",
      reason: "a drift observed for this generation stays Drifted",
      readyGeneration: 1,
      previousReady: { status: "False", reason: "Drifted" },
      lookedAtMinutesAgo: 1,
      want: { status: "False", reason: "Drifted" },
      requeueAfterMs: 9 * MINUTE + 1,
    },
    {
      name: "JustStarted",
      reason:
        "an operator that just started keeps a Ready written long ago for the bound: a restart does not make every Ready stale at once",
      readyGeneration: 1,
      previousReady: { status: "True", reason: "InSync" },
      lookedAtMinutesAgo: 0,
      want: { status: "True", reason: "InSync" },
      requeueAfterMs: 10 * MINUTE + 1,
    },
    {
      name: "ObservedLongAgo",
      reason: "no observation for longer than two sync intervals while paused: Unknown",
      readyGeneration: 1,
      previousReady: { status: "True", reason: "InSync" },
      lookedAtMinutesAgo: 11,
      want: { status: "Unknown", reason: "ReconcilePaused" },
      requeueAfterMs: undefined,
    },
    {
      name: "NewGenerationUnknown",
      reason: "paused before this generation was observed: the manager's state is unknown, not Ready",
      readyGeneration: 0,
      previousReady: { status: "True", reason: "InSync" },
      lookedAtMinutesAgo: 1,
      want: { status: "False", reason: "ReconcilePaused", observedGeneration: 1 },
      requeueAfterMs: undefined,
    },
  ] as const)("make no calls while paused, and keep Ready only while known: $name", async (c) => {
    const ready: Condition = {
      type: "Ready",
      ...c.previousReady,
      message: "",
      // written long ago: what counts is when this replica last observed it, or first looked
      lastTransitionTime: "2024-04-01T00:00:00Z",
      observedGeneration: c.readyGeneration,
    };
    const object = {
      ...edgeTenant({}, { annotations: { "nsxv.io/paused": "true" } }),
      status: { observedGeneration: c.readyGeneration, conditions: [ready] },
    };
    const { fake, pass, clock, store } = setup({ objects: [manager(), object] });
    if (c.lookedAtMinutesAgo > 0) {
      clock.ms = T0.getTime() - c.lookedAtMinutesAgo * MINUTE;
      await pass(object);
      clock.ms = T0.getTime();
    }
    const report = await pass(object);
    expect(fake.calls).toEqual([]);
    const written = store.get(refOf(object)) as NsxvObject;
    const find = (type: string) => written.status?.conditions?.find((x) => x.type === type);
    expect(find("Ready"), c.reason).toMatchObject(c.want);
    expect(find("Synced")).toMatchObject({ status: "False", reason: "ReconcilePaused" });
    expect(written.status?.observedGeneration, "a paused status carries observedGeneration").toBe(1);
    // back behind events: a routine look, not a change
    expect(report.outcome).toEqual(
      c.requeueAfterMs === undefined
        ? { type: "done" }
        : { type: "done", requeueAfterMs: c.requeueAfterMs, routine: true },
    );
  });

  it.each([
    {
      answer: "401",
      reason: "the credentials were refused on the dependent's own call",
      synced: "Unauthorized",
    },
    { answer: "403", reason: "the user lacks the rights for the dependent's call", synced: "Unauthorized" },
    {
      answer: "503",
      reason: "the manager is unavailable: its status should tell the others at once",
      synced: "Unreachable",
    },
    {
      answer: "no answer",
      reason: "the call timed out or could not connect: the same",
      synced: "Unreachable",
    },
  ])("ask for their manager's check now when a call gets $answer: $reason", async ({ answer, synced }) => {
    const object = edgeTenant();
    const { fake, pass } = setup({ objects: [manager(), object] });
    fake.faults.getEdge = [
      answer === "no answer"
        ? new NsxTransportError({
            method: "GET",
            path: "/api/4.0/edges/edge-1",
            reason: "timed out",
            notSent: false,
          })
        : apiError(Number(answer), "GET", "/api/4.0/edges/edge-1"),
    ];
    const report = await pass(object);
    expect(report.wake).toEqual([{ kind: "NSXManager", namespace: "ns", name: "nsx" }]);
    expect(condition(report, "Synced")).toMatchObject({ status: "False", reason: synced });
    expect(condition(report, "Ready"), "never observed: not Ready").toMatchObject({ status: "False" });
  });

  it("are not Ready for a new generation that could not be applied, whatever the old one was", async () => {
    const ready = {
      type: "Ready",
      status: "True" as const,
      reason: "InSync",
      message: 'edge-1 has tenant "red"',
      lastTransitionTime: "2024-04-01T00:00:00Z",
      observedGeneration: 1,
    };
    const object = {
      ...edgeTenant({ tenant: "blue" }, { generation: 2 }),
      status: { observedGeneration: 1, conditions: [ready] },
    };
    const { fake, pass } = setup({ objects: [{ ...manager(), status: { authenticated: false } }, object] });
    const report = await pass(object);
    expect(fake.calls).toEqual([]);
    expect(condition(report, "Ready")).toMatchObject({
      status: "False",
      reason: "ManagerNotReady",
      observedGeneration: 2,
    });
    expect(report.status?.observedGeneration).toBe(2);
  });

  it("fail terminally on a bad spec, Stalled, without calls", async () => {
    const object = poolAllocations({ allowed: ["10.0.0.0/33"] }, { generation: 5 });
    const { fake, pass } = setup({ objects: [manager(), object] });
    const report = await pass(object);
    expect(fake.calls).toEqual([]);
    expect(report.outcome).toMatchObject({ type: "failed", error: { terminal: true } });
    expect(condition(report, "Stalled")).toMatchObject({
      status: "True",
      reason: "InvalidSpec",
      observedGeneration: 5,
    });
    expect(report.status?.observedGeneration, "kstatus sees the Stalled of this generation").toBe(5);
  });

  it.each([
    {
      name: "EdgeNotFound",
      reason: "an unknown edge carries the manager's own words",
      object: edgeTenant({ edgeId: "edge-9" }),
      want: { reason: "EdgeNotFound", message: expect.stringContaining("errorCode 202") },
    },
    {
      name: "PoolNameNotFound",
      reason: "no pool has the name",
      object: poolAllocations({ pool: { name: "nope" } }),
      want: {
        reason: "PoolNotFound",
        message: expect.stringContaining('no pool named "nope" in scope globalroot-0'),
      },
    },
    {
      name: "PoolIdNotFound",
      reason: "no pool has the id",
      object: poolAllocations({ pool: { id: "ipaddresspool-7" } }),
      want: { reason: "PoolNotFound" },
    },
  ])("report $name", async ({ reason, object, want }) => {
    const { pass } = setup({ objects: [manager(), object] });
    const report = await pass(object);
    expect(condition(report, "Synced"), reason).toMatchObject({ status: "False", ...want });
    expect(report.outcome, reason).toMatchObject({ type: "failed", error: { terminal: false } });
  });

  it("report two pools of one name as AmbiguousPool", async () => {
    const object = poolAllocations({ pool: { name: "controllers" } });
    const fake = fakeManager({ pools: { "globalroot-0": [pool(), pool({ objectId: "ipaddresspool-2" })] } });
    const { pass } = setup({ objects: [manager(), object], fake });
    const report = await pass(object);
    expect(condition(report, "Synced")).toMatchObject({ reason: "AmbiguousPool" });
    expect(count(fake.calls, "listAllocations"), "nothing is read from either pool").toBe(0);
  });
});

describe("conflicts", () => {
  it("leave the newer EdgeTenant of an edge Stalled, without calls, naming the owner", async () => {
    const owner = withOriginal(
      edgeTenant({}, { name: "a", creationTimestamp: "2024-01-01T00:00:00Z" }),
      "red",
    );
    const loser = edgeTenant({ tenant: "green" }, { name: "b", creationTimestamp: "2024-03-01T00:00:00Z" });
    const { fake, pass } = setup({ objects: [manager(), owner, loser] });
    const report = await pass(loser);
    expect(fake.calls).toEqual([]);
    expect(condition(report, "Stalled")).toMatchObject({
      status: "True",
      reason: "Conflict",
      message: expect.stringContaining("owned by EdgeTenant ns/a"),
    });
    expect(report.outcome, "looked at again on the resync, behind events").toEqual({
      type: "done",
      requeueAfterMs: 300_000,
      routine: true,
    });
    expect((await pass(owner)).changes.tenantCorrections, "the owner acts").toHaveLength(1);
  });

  it("find a by-id and an older by-name object on the same pool once the list is read", async () => {
    const byName = poolAllocations(
      { pool: { name: "controllers" } },
      { name: "by-name", creationTimestamp: "2024-01-01T00:00:00Z" },
    );
    const byId = poolAllocations(
      { pool: { id: "ipaddresspool-1" } },
      { name: "by-id", creationTimestamp: "2024-02-01T00:00:00Z" },
    );
    const { fake, pass } = setup({ objects: [manager(), byName, byId] });
    const report = await pass(byId);
    expect(count(fake.calls, "listAllocations"), "the loser reads no allocations").toBe(0);
    expect(condition(report, "Stalled")).toMatchObject({
      reason: "Conflict",
      message: expect.stringContaining(
        "pool ipaddresspool-1 (controllers) is owned by IPPoolAllocations ns/by-name",
      ),
    });
    const owner = await pass(byName);
    expect(condition(owner, "Stalled")).toBeUndefined();
    expect(condition(owner, "Synced")).toMatchObject({ status: "True" });
  });
});

/** the index builds among the store's lists: each lists its kind, then the NSXManagers */
const builds = (listed: readonly string[]) => listed.filter((kind) => kind !== "NSXManager");

describe("the conflict index", () => {
  const owner = withOriginal(edgeTenant({}, { name: "a", creationTimestamp: "2024-01-01T00:00:00Z" }), "red");
  // its original recorded while it owned the edge before: it corrects at once when it owns it again
  const loser = withOriginal(
    edgeTenant({ tenant: "green" }, { name: "b", creationTimestamp: "2024-03-01T00:00:00Z" }),
    "red",
  );

  it("is built once per store revision: not again when only statuses changed, again after a change", async () => {
    const { store, pass, listed } = setup({ objects: [manager(), owner, loser] });
    for (const object of [loser, owner, loser, owner]) await pass(object);
    expect(builds(listed), "status writes leave the revision: one build for four reconciles").toEqual([
      "EdgeTenant",
    ]);
    store.put({ ...owner, metadata: { ...owner.metadata, deletionTimestamp: "2024-04-01T00:00:00Z" } });
    const report = await pass(loser);
    expect(builds(listed), "the owner's deletion moved the revision: built again").toEqual([
      "EdgeTenant",
      "EdgeTenant",
    ]);
    expect(condition(report, "Stalled"), "the rebuilt index no longer names the owner").toBeUndefined();
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "blue", to: "green" }]);
  });

  it("is kept per kind: a pool object's change does not rebuild the EdgeTenants' index", async () => {
    const pools = poolAllocations({}, { name: "p" });
    const { store, pass, listed } = setup({ objects: [manager(), owner, pools] });
    await pass(owner);
    await pass(pools);
    store.put({ ...pools, spec: { ...pools.spec, allowed: ["10.0.0.1"] } });
    await pass(owner);
    await pass(pools);
    expect(builds(listed)).toEqual(["EdgeTenant", "IPPoolAllocations", "IPPoolAllocations"]);
  });

  it("is built again when an NSXManager changes: conflicts are per real manager, which they tell", async () => {
    const { store, pass, listed } = setup({ objects: [manager(), owner, loser] });
    await pass(loser);
    const nsx = manager({ url: "https://moved.example" });
    store.put(nsx);
    await pass(loser);
    expect(builds(listed)).toEqual(["EdgeTenant", "EdgeTenant"]);
  });

  it("is built on every reconcile when the store offers no revision", async () => {
    const { pass, listed } = setup({ objects: [manager(), owner, loser], revisions: false });
    for (const object of [loser, owner, loser]) await pass(object);
    expect(builds(listed)).toEqual(["EdgeTenant", "EdgeTenant", "EdgeTenant"]);
  });
});

describe("a pass over many objects", () => {
  it("lists the pools of a manager and scope once for N objects", async () => {
    const objects = [1, 2, 3, 4, 5].map((n) =>
      poolAllocations({ pool: { id: `ipaddresspool-${n}` } }, { name: `pool-${n}` }),
    );
    const fake = fakeManager({
      pools: {
        "globalroot-0": [1, 2, 3, 4, 5].map((n) => pool({ objectId: `ipaddresspool-${n}`, name: `p${n}` })),
      },
      allocations: Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`ipaddresspool-${n}`, allocations()])),
    });
    const { pass } = setup({
      objects: [manager(), ...objects],
      fake,
      deps: { kinds: { IPPoolAllocations: { poolListTtlMs: Infinity } } },
    });
    await pass(manager());
    for (const object of objects) await pass(object);
    expect(count(fake.calls, "listPools"), "one list shared by the manager check and five objects").toBe(1);
    expect(count(fake.calls, "listAllocations")).toBe(5);
  });

  it("in plan mode writes nothing and lists Observe objects' would-be actions", async () => {
    const enforce = poolAllocations({ allowed: [] }, { name: "enforce" });
    const observe = edgeTenant({ managementPolicy: "Observe" }, { name: "observe" });
    const { fake, pass } = setup({
      objects: [manager(), enforce, observe],
      deps: { mode: "plan", oneShot: { releaseStrays: true } },
    });
    fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.7"));
    const a = await pass(enforce);
    const b = await pass(observe);
    expect(fake.calls.filter((c) => c.startsWith("put") || c.startsWith("release"))).toEqual([]);
    expect(a.planned).toEqual([
      { action: expect.objectContaining({ type: "releaseAddress", ip: "10.0.0.7" }) },
    ]);
    expect(b.planned).toEqual([
      {
        action: { type: "setTenant", edgeId: "edge-1", from: "red", to: "blue" },
        withheld: expect.stringContaining("Observe"),
      },
    ]);
    expect(a.changes.releases).toEqual([]);
  });

  it("in a one-shot apply releases strays seen for the first time only with releaseStrays", async () => {
    const object = poolAllocations({ allowed: [] });
    for (const releaseStrays of [false, true]) {
      const { fake, pass } = setup({ objects: [manager(), object], deps: { oneShot: { releaseStrays } } });
      fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.7"));
      const report = await pass(object);
      expect(report.changes.releases.length, `releaseStrays ${releaseStrays}`).toBe(releaseStrays ? 1 : 0);
    }
  });

  it("uses a new client after the Secret changes and closes the old one", async () => {
    const object = edgeTenant();
    const { store, clients, pass } = setup({ objects: [manager(), object] });
    await pass(object);
    store.putSecret(credentials("nsx-creds", { username: "admin", password: "rotated" }));
    await pass(object);
    expect(clients.map((c) => c.options.password)).toEqual(["s3cret", "rotated"]);
    expect(clients.map((c) => c.closed)).toEqual([true, false]);
  });

  it("returns a quiet report for an object that is gone, and closes a deleted manager's client", async () => {
    const { clients, reconcile, pass, store } = setup({ objects: [manager()] });
    await pass(manager());
    expect((await reconcile({ kind: "EdgeTenant", namespace: "ns", name: "nope" })).outcome).toEqual({
      type: "done",
      requeueAfterMs: undefined,
    });
    store.put({ ...manager(), metadata: { ...manager().metadata, deletionTimestamp: iso(T0) } });
    const report = await reconcile({ kind: "NSXManager", namespace: "ns", name: "nsx" });
    expect(report.status).toBeUndefined();
    expect(clients[0]?.closed).toBe(true);
  });
});
