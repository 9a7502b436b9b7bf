/**
 * The staleList fault: the paged edge list and /summary lag behind the edges (frozen as they were,
 * or by lagMs of the simulator's clock) while a GET of an edge answers what is stored.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FaultView } from "../../src/simulator/index.ts";
import { TestSimulator, xml } from "./helpers.ts";

const STATE = { edges: [{ generate: { count: 3, idStart: 1, tenant: "old", firewallRules: 0 } }] };

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({ state: STATE });
});
afterEach(() => t.close());

interface Summary {
  id: string;
  tenantId: string;
  revision: string;
  name: string;
}

async function listed(query = ""): Promise<Summary[]> {
  const reply = await t.api("GET", `/api/4.0/edges${query}`);
  expect(reply.status).toBe(200);
  const page = xml(reply.text, ["edgeSummary"]).pagedEdgeList as { edgePage: { edgeSummary?: Summary[] } };
  return page.edgePage.edgeSummary ?? [];
}

async function summary(id: string): Promise<{ status: number; summary?: Summary }> {
  const reply = await t.api("GET", `/api/4.0/edges/${id}/summary`);
  return reply.status === 200
    ? { status: 200, summary: xml(reply.text).edgeSummary as Summary }
    : { status: reply.status };
}

async function tenantOf(id: string): Promise<string | undefined> {
  return (xml((await t.api("GET", `/api/4.0/edges/${id}`)).text).edge as { tenant?: string }).tenant;
}

async function fault(spec: Record<string, unknown>): Promise<FaultView> {
  const reply = await t.control<FaultView>("POST", "faults", spec);
  expect(reply.status).toBe(201);
  return reply.json;
}

async function advance(ms: number): Promise<void> {
  await t.control("POST", "clock", { advanceMs: ms });
}

describe("staleList, frozen", () => {
  it("keeps the list and summaries as they were while the edges move on, until the fault is removed", async () => {
    const frozen = await fault({ kind: "staleList" });
    await t.control("PATCH", "edges/edge-2", { tenant: "new", name: "renamed" });
    expect(await tenantOf("edge-2")).toBe("new");
    const stale = { id: "edge-2", tenantId: "old", revision: "1", name: "esg-02" };
    expect((await listed()).find((s) => s.id === "edge-2")).toMatchObject(stale);
    expect((await summary("edge-2")).summary).toMatchObject(stale);
    // filters and sorting work on what the list shows
    expect((await listed("?tenant=new")).map((s) => s.id)).toEqual([]);
    expect((await listed("?tenant=old")).map((s) => s.id)).toEqual(["edge-1", "edge-2", "edge-3"]);
    expect(
      (await t.control<{ edges: { id: string; tenant: string }[] }>("GET", "state")).json.edges,
    ).toContainEqual(expect.objectContaining({ id: "edge-2", tenant: "new" }));

    await t.control("DELETE", `faults/${frozen.id}`);
    expect((await listed()).find((s) => s.id === "edge-2")).toMatchObject({ tenantId: "new", revision: "2" });
  });

  it("does not list an edge added after it froze; its summary is not found", async () => {
    await fault({ kind: "staleList" });
    await t.control("PUT", "edges/edge-9", { generate: { tenant: "late" } });
    expect((await listed()).map((s) => s.id)).toEqual(["edge-1", "edge-2", "edge-3"]);
    expect((await summary("edge-9")).status).toBe(404);
    expect(await tenantOf("edge-9")).toBe("late");
  });

  it("applies to one route when told: a stale list with fresh summaries", async () => {
    await fault({ route: "listEdges", kind: "staleList" });
    await t.control("PATCH", "edges/edge-1", { tenant: "new" });
    expect((await listed())[0]).toMatchObject({ id: "edge-1", tenantId: "old" });
    expect((await summary("edge-1")).summary).toMatchObject({ tenantId: "new" });
  });

  it("serves count stale answers, then fresh ones", async () => {
    await fault({ kind: "staleList", route: "listEdges", count: 1 });
    await t.control("PATCH", "edges/edge-1", { tenant: "new" });
    expect((await listed())[0]).toMatchObject({ tenantId: "old" });
    expect((await listed())[0]).toMatchObject({ tenantId: "new" });
  });

  it("can be set in-process, as the operator's tests do", async () => {
    t.state.faults.add({ route: "*", kind: "staleList" });
    t.state.changeEdge("edge-3", { tenant: "new" });
    expect((await listed())[2]).toMatchObject({ id: "edge-3", tenantId: "old" });
  });
});

describe("staleList, lagging", () => {
  it("shows each edge's newest summary that is lagMs old by the simulator's clock", async () => {
    await fault({ kind: "staleList", lagMs: 60_000 });
    await t.control("PATCH", "edges/edge-1", { tenant: "first" });
    await advance(30_000);
    expect((await listed())[0]).toMatchObject({ tenantId: "old", revision: "1" });
    await t.control("PATCH", "edges/edge-1", { tenant: "second" });
    await advance(30_001);
    expect((await listed())[0]).toMatchObject({ tenantId: "first", revision: "2" });
    expect((await summary("edge-1")).summary).toMatchObject({ tenantId: "first" });
    await advance(30_000);
    expect((await listed())[0]).toMatchObject({ tenantId: "second", revision: "3" });
  });

  it("lists an edge added while it lags once lagMs has passed", async () => {
    await fault({ kind: "staleList", lagMs: 5_000 });
    await t.control("PUT", "edges/edge-9", { generate: { tenant: "late" } });
    expect((await listed()).map((s) => s.id)).not.toContain("edge-9");
    await advance(5_000);
    expect((await listed()).find((s) => s.id === "edge-9")).toMatchObject({ tenantId: "late" });
  });

  it("follows the wall clock too (the simulator's nowMs: Date.now unless it is given one)", async () => {
    let wallMs = Date.UTC(2025, 0, 1);
    await t.close();
    t = await TestSimulator.start({ state: STATE, nowMs: () => wallMs });
    await fault({ kind: "staleList", lagMs: 150 });
    await t.control("PATCH", "edges/edge-1", { tenant: "new" });
    expect((await listed())[0]).toMatchObject({ tenantId: "old" });
    wallMs += 200;
    expect((await listed())[0]).toMatchObject({ tenantId: "new" });
  });
});

describe("staleList, refused", () => {
  it.each([
    {
      spec: { kind: "staleList", route: "getEdge" },
      error: "route: a stale list is listEdges, getEdgeSummary or *",
    },
    { spec: { kind: "staleList", lagMs: -1 }, error: "lagMs: must be between 0 and 86400000" },
    { spec: { kind: "staleList", latencyMs: 5 }, error: "latencyMs: unknown field" },
  ])("$spec: $error", async ({ spec, error }) => {
    const reply = await t.control<{ error: string }>("POST", "faults", spec);
    expect(reply.status).toBe(400);
    expect(reply.json.error).toContain(error);
  });
});
