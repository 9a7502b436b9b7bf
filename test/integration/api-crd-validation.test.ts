/**
 * The CRDs of crds/ on a real kube-apiserver agree with the TypeScript validator the CLI uses:
 * every case of test/api/validation-cases.ts gets the same verdict from both (except where a
 * case says why not), rejections name the same field (and neither quotes a credential), and
 * accepted objects get the same defaults. Objects are sent with dryRun=All and fieldValidation=Strict, so nothing is stored.
 *
 * The CRDs are sent as they are written (installCrds sends them untyped).
 */
import { fileURLToPath } from "node:url";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { beforeAll, expect, it } from "vitest";
import { ResourceValidator } from "../../src/api/schema.ts";
import { GROUP, VERSION, type Kind } from "../../src/api/types.ts";
import { PLURALS } from "../../src/api/types.ts";
import { objectFor, VALIDATION_CASES } from "../api/validation-cases.ts";
import {
  apiStatus,
  createTestNamespace,
  describeWithControlPlane,
  installCrds,
} from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";

const CRDS_DIR = fileURLToPath(new URL("../../crds", import.meta.url));
describeWithControlPlane("CRD validation: kube-apiserver and the TypeScript validator agree", (cp) => {
  const kc = cp.makeKubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  const validator = ResourceValidator.load();
  let namespace = "";

  beforeAll(async () => {
    namespace = await createTestNamespace(kc, "nsxv-crd");
    await installCrdsAsWritten();
  });

  /** installs the CRDs, then waits until each kind is served with the schema just written */
  async function installCrdsAsWritten(): Promise<void> {
    await installCrds(kc, CRDS_DIR);
    for (const kind of Object.keys(PLURALS) as Kind[]) {
      const probe = objectFor({ name: "", reason: "", kind }, "probe");
      // served, and with the schema just written: the server fills in a default
      await waitFor(`${kind} served with defaults`, async () => {
        const { object } = await send(kind, probe);
        return JSON.stringify(object?.spec).includes('"requestsPerSecond":20') ||
          JSON.stringify(object?.spec).includes('"managementPolicy":"Enforce"')
          ? true
          : undefined;
      });
    }
  }

  /** the server's verdict: the created (dry-run) object, or the rejection's message */
  async function send(kind: Kind, body: unknown): Promise<{ object?: { spec: unknown }; message?: string }> {
    try {
      const object = (await custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURALS[kind],
        body,
        dryRun: "All",
        fieldValidation: "Strict",
      })) as { spec: unknown };
      return { object };
    } catch (error) {
      const status = apiStatus(error);
      if (status !== 422 && status !== 400) throw error;
      const body = (error as { body?: unknown }).body;
      const text = typeof body === "string" ? body : JSON.stringify(body);
      return { message: (JSON.parse(text) as { message: string }).message };
    }
  }

  it.each(VALIDATION_CASES.map((c, i) => ({ ...c, index: i })))("$name", async (c) => {
    const body = objectFor(c, `case-${c.index}`);
    const ours = validator.validate(c.kind, body);
    const theirs = await send(c.kind, body);
    const accepts = c.server?.accepts ?? c.field === undefined;
    expect(theirs.object !== undefined, `${c.reason}; server said: ${theirs.message ?? "ok"}`).toBe(accepts);
    if (c.field !== undefined && !accepts) {
      // the server names the field as we do (`spec.allowed[1]`, `spec.pool`, `unknown field "spec.x"`)
      expect(theirs.message, c.reason).toContain(c.field);
      // the server's refusal is printed by kubectl and kept in audit logs: a credential stays out of it
      if (c.notShown !== undefined) expect(theirs.message, c.reason).not.toContain(c.notShown);
    }
    if (theirs.object !== undefined && ours.issues.length === 0) {
      expect((ours.value as { spec: unknown }).spec, `${c.reason}: same defaults`).toEqual(
        theirs.object.spec,
      );
    }
  });
});
