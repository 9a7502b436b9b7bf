import type { CoreV1Event } from "@kubernetes/client-node";
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import type { EventBody, EventChange, EventObject, EventSink } from "../../src/controller/events.ts";
import type { EventApi } from "../../src/kube/event-sink.ts";
import { MemoryEventSink, SinkEventRecorder, nopRecorder } from "../../src/controller/events.ts";
import { KubernetesEventSink } from "../../src/kube/event-sink.ts";

const edge: EventObject = {
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata: { name: "edge-7", namespace: "net", uid: "u-1", resourceVersion: "10" },
};
const pool: EventObject = {
  apiVersion: "nsxv.io/v1alpha1",
  kind: "IPPoolAllocations",
  metadata: { name: "pods", namespace: "net", uid: "u-2" },
};

function setup(options: { sink?: EventSink; maxPendingWrites?: number } = {}) {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const memory = new MemoryEventSink();
  const recorder = new SinkEventRecorder({
    sink: options.sink ?? memory,
    clock,
    host: "node-1",
    maxPendingWrites: options.maxPendingWrites,
  });
  return { clock, sink: memory, recorder };
}

describe("SinkEventRecorder", () => {
  it("writes a core/v1 Event for the object", async () => {
    const { recorder, sink } = setup();
    recorder.normal(edge, "UpdatedEdgeTenant", "tenant set to team-a (was team-b)");
    await recorder.flush();
    expect(sink.events).toEqual([
      {
        name: "edge-7.1",
        namespace: "net",
        involvedObject: {
          apiVersion: "nsxv.io/v1alpha1",
          kind: "EdgeTenant",
          namespace: "net",
          name: "edge-7",
          uid: "u-1",
          resourceVersion: "10",
        },
        type: "Normal",
        reason: "UpdatedEdgeTenant",
        message: "tenant set to team-a (was team-b)",
        count: 1,
        firstTimestamp: "2025-01-01T00:00:00.000Z",
        lastTimestamp: "2025-01-01T00:00:00.000Z",
        source: { component: "nsxv-operator", host: "node-1" },
      },
    ]);
  });

  it("aggregates identical events into one Event with a count", async () => {
    const { recorder, sink, clock } = setup();
    recorder.warning(edge, "Unreachable", "GET edge-7: HTTP 503");
    await recorder.flush();
    await clock.advance(60_000);
    recorder.warning(edge, "Unreachable", "GET edge-7: HTTP 503");
    recorder.warning(edge, "Unreachable", "GET edge-7: HTTP 503");
    await recorder.flush();
    expect(sink.events).toHaveLength(1);
    expect(sink.events[0]).toMatchObject({
      count: 3,
      firstTimestamp: "2025-01-01T00:00:00.000Z",
      lastTimestamp: "2025-01-01T00:01:00.000Z",
    });
  });

  const distinct: { name: string; reason: string; record: (r: SinkEventRecorder) => void }[] = [
    {
      name: "OtherMessage",
      reason: "A different message is a different event.",
      record: (r) => r.warning(edge, "Unreachable", "GET edge-7: HTTP 500"),
    },
    {
      name: "OtherReason",
      reason: "A different reason is a different event.",
      record: (r) => r.warning(edge, "ConcurrentModification", "GET edge-7: HTTP 503"),
    },
    {
      name: "OtherType",
      reason: "Normal and Warning are never merged.",
      record: (r) => r.normal(edge, "Unreachable", "GET edge-7: HTTP 503"),
    },
    {
      name: "OtherObject",
      reason: "Events of different objects are never merged.",
      record: (r) => r.warning(pool, "Unreachable", "GET edge-7: HTTP 503"),
    },
  ];
  it.each(distinct)("keeps events apart: $name", async ({ reason, record }) => {
    const { recorder, sink } = setup();
    recorder.warning(edge, "Unreachable", "GET edge-7: HTTP 503");
    record(recorder);
    await recorder.flush();
    expect(
      sink.events.map((e) => e.count),
      reason,
    ).toEqual([1, 1]);
  });

  it("rate-limits per object: burst 25, then one per 5 minutes", async () => {
    const { recorder, sink, clock } = setup();
    for (let i = 0; i < 30; i++) recorder.normal(edge, "ReleasedAddress", `released 10.0.0.${i}`);
    recorder.normal(pool, "ReleasedAddress", "another object has its own bucket");
    await recorder.flush();
    expect(sink.events.filter((e) => e.involvedObject.name === "edge-7")).toHaveLength(25);
    expect(sink.events.filter((e) => e.involvedObject.name === "pods")).toHaveLength(1);

    await clock.advance(299_000);
    recorder.normal(edge, "ReleasedAddress", "too early");
    await clock.advance(1000);
    recorder.normal(edge, "ReleasedAddress", "after five minutes");
    recorder.normal(edge, "ReleasedAddress", "and no more");
    await recorder.flush();
    const messages = sink.events.map((e) => e.message);
    expect(messages).toContain("after five minutes");
    expect(messages).not.toContain("too early");
    expect(messages).not.toContain("and no more");
  });

  it("counts rate-limited repeats in the next write of the aggregated Event", async () => {
    const { recorder, sink, clock } = setup();
    for (let i = 0; i < 40; i++) {
      recorder.warning(edge, "Drifted", "tenant differs");
      await recorder.flush();
    }
    expect(sink.events).toHaveLength(1);
    expect(sink.events[0]?.count).toBe(25);
    await clock.advance(300_000);
    recorder.warning(edge, "Drifted", "tenant differs");
    await recorder.flush();
    expect(sink.events[0]?.count).toBe(41);
  });

  it("creates the Event again when the aggregated one has expired", async () => {
    const { recorder, sink } = setup();
    recorder.warning(edge, "ManagerNotReady", "manager nsx-1 unreachable");
    await recorder.flush();
    sink.events.splice(0); // the API server dropped it (TTL)
    recorder.warning(edge, "ManagerNotReady", "manager nsx-1 unreachable");
    await recorder.flush();
    expect(sink.events).toHaveLength(1);
    expect(sink.events[0]?.count).toBe(2);
  });

  it("never throws when the sink fails, and goes on with later events", async () => {
    let fail = true;
    const memory = new MemoryEventSink();
    const sink: EventSink = {
      create: (e) => (fail ? Promise.reject(new Error("apiserver down")) : memory.create(e)),
      patch: (ns, name, change) => memory.patch(ns, name, change),
    };
    const { recorder } = setup({ sink });
    expect(() => recorder.warning(edge, "Conflict", "edge-7 claimed by net/other")).not.toThrow();
    await recorder.flush();
    fail = false;
    recorder.warning(edge, "InvalidSpec", "edgeId must be edge-<n>");
    await recorder.flush();
    expect(memory.events.map((e) => e.reason)).toEqual(["InvalidSpec"]);
  });

  it("drops writes beyond maxPendingWrites instead of queueing without bound", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const memory = new MemoryEventSink();
    const sink: EventSink = {
      create: async (e) => {
        await gate;
        return memory.create(e);
      },
      patch: (ns, name, change) => memory.patch(ns, name, change),
    };
    const { recorder } = setup({ sink, maxPendingWrites: 2 });
    for (let i = 0; i < 5; i++) recorder.normal(edge, "ReleasedAddress", `released ${i}`);
    release();
    await recorder.flush();
    expect(memory.events.map((e) => e.message)).toEqual(["released 0", "released 1"]);
  });

  it("cuts long messages", async () => {
    const { recorder, sink } = setup();
    recorder.warning(edge, "ConcurrentModification", "x".repeat(5000));
    await recorder.flush();
    expect(sink.events[0]?.message.length).toBeLessThanOrEqual(1024);
    expect(sink.events[0]?.message).toMatch(/^x+\.\.\.\[cut: \d+ more characters, sha256 [0-9a-f]{8}\]$/);
  });

  it("uses the default namespace for objects without one, and nopRecorder ignores everything", async () => {
    const { recorder, sink } = setup();
    recorder.normal({ kind: "Node", metadata: { name: "n1" } }, "Drifted", "m");
    await recorder.flush();
    expect(sink.events[0]?.namespace).toBe("default");
    expect(() => nopRecorder.warning(edge, "PoolExhausted", "m")).not.toThrow();
  });
});

describe("KubernetesEventSink", () => {
  const body: EventBody = {
    namespace: "net",
    involvedObject: {
      apiVersion: "nsxv.io/v1alpha1",
      kind: "EdgeTenant",
      namespace: "net",
      name: "edge-7",
      uid: "u-1",
    },
    type: "Warning",
    reason: "Drifted",
    message: "tenant differs",
    count: 1,
    firstTimestamp: "2025-01-01T00:00:00.000Z",
    lastTimestamp: "2025-01-01T00:00:00.000Z",
    source: { component: "nsxv-operator", host: "node-1" },
  };

  it("creates with generateName and returns the server's name", async () => {
    const created: CoreV1Event[] = [];
    const api = {
      createNamespacedEvent: async (param: { namespace: string; body: CoreV1Event }) => {
        created.push(param.body);
        expect(param.namespace).toBe("net");
        return { ...param.body, metadata: { ...param.body.metadata, name: "edge-7.abcde" } };
      },
    } as unknown as EventApi;
    expect(await new KubernetesEventSink({ api }).create(body)).toBe("edge-7.abcde");
    expect(created[0]?.metadata).toEqual({ generateName: "edge-7.", namespace: "net" });
    expect(created[0]?.firstTimestamp).toEqual(new Date("2025-01-01T00:00:00.000Z"));
    expect(created[0]).toMatchObject({ type: "Warning", reason: "Drifted", count: 1 });
  });

  it("patches with a merge patch and reports a missing Event as false", async () => {
    const seen: { param: unknown; contentType: string | undefined }[] = [];
    let missing = false;
    const api = {
      patchNamespacedEvent: async (
        param: { name: string; namespace: string; body: EventChange },
        options: { middleware: { pre: (req: { setHeaderParam(k: string, v: string): void }) => unknown }[] },
      ) => {
        let contentType: string | undefined;
        for (const m of options.middleware)
          m.pre({ setHeaderParam: (k, v) => k === "Content-Type" && (contentType = v) });
        seen.push({ param, contentType });
        if (missing) throw new ApiException(404, "NotFound", {}, {});
        return {};
      },
    } as unknown as EventApi;
    const sink = new KubernetesEventSink({ api });
    const change = { count: 2, lastTimestamp: "2025-01-01T00:01:00.000Z", message: "tenant differs" };
    expect(await sink.patch("net", "edge-7.abcde", change)).toBe(true);
    expect(seen[0]).toEqual({
      param: { name: "edge-7.abcde", namespace: "net", body: change },
      contentType: "application/merge-patch+json",
    });
    missing = true;
    expect(await sink.patch("net", "edge-7.abcde", change)).toBe(false);
  });
});
