/**
 * An NSXManager whose connection anyone on the network path can read or change says so on every
 * pass, checked or failed: `Insecure=True` with the reason, and a Warning event when that starts
 * or its reason changes (not on every resync).
 */
import { describe, expect, it } from "vitest";
import type { NSXManager, NSXManagerSpec } from "../../../src/api/types.ts";
import { NsxTransportError } from "../../../src/nsx/errors.ts";
import { condition, setup } from "../harness.ts";
import { manager } from "./fixtures.ts";

describe("NSXManager Insecure", () => {
  it.each([
    {
      name: "SkipVerify",
      reason: "https without certificate verification: anyone in between can pose as the manager",
      spec: { url: "https://nsx.example", tls: { insecureSkipVerify: true } },
      want: { reason: "InsecureSkipVerify", message: "TLS certificate verification is off" },
    },
    {
      name: "PlainHttpRemote",
      reason: "http:// to another machine: credentials in clear text",
      spec: { url: "http://nsx.example:8080" },
      want: { reason: "PlainHTTP", message: "plain http:// to nsx.example:8080" },
    },
    {
      name: "PlainHttpPrivateAddress",
      reason: "a private address is still another machine: the network between is not ours",
      spec: { url: "http://10.1.2.3" },
      want: { reason: "PlainHTTP", message: "plain http:// to 10.1.2.3" },
    },
    {
      name: "PlainHttpAndSkipVerify",
      reason: "plain http is the whole story: the flag has nothing to verify",
      spec: { url: "http://nsx.example", tls: { insecureSkipVerify: true } },
      want: { reason: "PlainHTTP", message: "plain http:// to nsx.example" },
    },
  ])("$name: $reason", async ({ spec, want }) => {
    const object = manager(spec as Partial<NSXManagerSpec>);
    const { pass } = setup({ objects: [object] });
    const first = await pass(object);
    expect(condition(first, "Insecure")).toMatchObject({
      status: "True",
      reason: want.reason,
      message: expect.stringContaining(want.message),
    });
    expect(condition(first, "Ready"), "a warning, not a failure").toMatchObject({ status: "True" });
    expect(first.events).toEqual([
      { type: "Warning", reason: want.reason, message: expect.stringContaining(want.message) },
    ]);
    const again = await pass(object);
    expect(again.events, "said once, not on every resync").toEqual([]);
  });

  it.each([
    { name: "Https", reason: "the default: verified TLS", spec: { url: "https://nsx.example" } },
    { name: "LoopbackV4", reason: "a simulator or a local proxy", spec: { url: "http://127.0.0.1:18443" } },
    { name: "LoopbackName", reason: "localhost is this machine", spec: { url: "http://localhost:18443" } },
    { name: "LoopbackV6", reason: "::1 is this machine", spec: { url: "http://[::1]:18443" } },
  ])("no warning: $name ($reason)", async ({ spec }) => {
    const object = manager(spec);
    const { pass } = setup({ objects: [object] });
    const report = await pass(object);
    expect(condition(report, "Insecure")).toBeUndefined();
    expect(report.events).toEqual([]);
  });

  it("is said when the check fails too, and goes when the spec is made secure", async () => {
    const insecure = manager({ url: "http://nsx.example" });
    const { fake, pass, store } = setup({ objects: [insecure] });
    /** the object with another spec and the status the last pass wrote, as an edit would leave it */
    const edited = (spec: Partial<NSXManagerSpec>): NSXManager => {
      const current = store.get({ kind: "NSXManager", namespace: "ns", name: "nsx" }) as NSXManager;
      const object = { ...current, spec: { ...current.spec, ...spec } };
      store.put(object);
      return object;
    };
    fake.faults.listPools = [
      new NsxTransportError({ method: "GET", path: "/api", reason: "connection refused", notSent: true }),
    ];
    const failed = await pass(insecure);
    expect(condition(failed, "Ready")).toMatchObject({ status: "False", reason: "Unreachable" });
    expect(condition(failed, "Insecure")).toMatchObject({ status: "True", reason: "PlainHTTP" });
    expect(failed.events.map((e) => e.reason)).toEqual(["PlainHTTP", "Unreachable"]);

    const changed = await pass(edited({ url: "https://nsx.example", tls: { insecureSkipVerify: true } }));
    expect(changed.events, "another reason is news").toEqual([
      expect.objectContaining({ type: "Warning", reason: "InsecureSkipVerify" }),
    ]);

    const fixed = await pass(edited({ tls: { insecureSkipVerify: false } }));
    expect(condition(fixed, "Insecure")).toBeUndefined();
    expect(fixed.events).toEqual([]);
  });
});
