/**
 * A grace period belongs to an allocation, not to an address: NSX-v hands out the lowest free
 * address (or a chosen one), so an address someone else released is soon allocated again, to a
 * new consumer. The operator over a directory of manifests against the simulator: a stray address
 * is released by another client and allocated again with a new note while its grace period runs;
 * the new allocation is kept for a whole grace period of its own, and the untouched strays beside
 * it are released on time. The operator runs on a fake clock, which the simulator's records follow:
 * the grace periods pass without waiting for them.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { IPPoolAllocationsStatus } from "../../src/api/types.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { advance, advanceUntil } from "../support/operator-time.ts";
import { waitFor } from "../support/wait.ts";
import { CREDENTIALS, FaultRig, POOL, POOL_ID, STRAYS } from "./rig.ts";

const GRACE_MS = 4_000;
/** how far the clock moves at a time: finer than any bound below */
const STEP_MS = 100;
const [UNTOUCHED, REALLOCATED] = STRAYS as [string, string, string];

let rig: FaultRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe("an address released and allocated again during its grace period", () => {
  it("is a new stray: kept for a whole grace period of its own, while the others go on time", async () => {
    const clock = new FakeClock();
    rig = await FaultRig.start({ release: { minStrayAge: `${GRACE_MS / 1000}s`, maxPerSync: 10 }, clock });
    const { sim } = rig;
    const { registry } = rig.metrics;
    const until = <T>(what: string, check: () => T | undefined, limitMs = 2 * GRACE_MS) =>
      advanceUntil(what, clock, registry, check, { stepMs: STEP_MS, limitMs });
    const stray = (ip: string) =>
      (rig?.status("IPPoolAllocations", POOL) as IPPoolAllocationsStatus | undefined)?.stray?.find(
        (s) => s.ip === ip,
      );
    const firstSeen = await waitFor("the strays are seen", async () => stray(REALLOCATED)?.firstSeen);
    const firstId = stray(REALLOCATED)?.allocationId;
    expect(firstId, "status shows the allocation it times").toMatch(/\S/);

    // another client releases the address and a new machine is given it, 1.5 s into the grace period
    await advance(clock, registry, 1_500, STEP_MS);
    const auth = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`;
    const released = await fetch(
      `${sim.url}/api/2.0/services/ipam/pools/${POOL_ID}/ipaddresses/${REALLOCATED}`,
      {
        method: "DELETE",
        headers: { authorization: auth },
      },
    );
    expect(released.status).toBe(200);
    const allocated = await fetch(`${sim.url}/_simulator/pools/${POOL_ID}/allocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mode: "RESERVE", ip: REALLOCATED, note: "vm-new" }),
    });
    expect(allocated.status).toBeLessThan(300);
    const reallocatedAtMs = clock.now();

    const audit = () => sim.state.audit.snapshot().releases;
    const releaseOf = (ip: string, note: string) => audit().find((r) => r.ip === ip && r.note === note);
    const untouched = await until("the untouched stray is released", () =>
      releaseOf(UNTOUCHED, `host ${UNTOUCHED}`),
    );
    const dueMs = Date.parse(firstSeen) + GRACE_MS;
    expect(Date.parse(untouched.time), "not before its grace period").toBeGreaterThanOrEqual(dueMs - 1_000);
    expect(Date.parse(untouched.time), "and on time").toBeLessThan(dueMs + 3_000);

    expect(
      sim.state
        .pool(POOL_ID)
        ?.allocations()
        .some((a) => a.ipAddress === REALLOCATED),
      "the new machine keeps its address when the old allocation's grace period is over",
    ).toBe(true);
    const tracked = await until("status times the new allocation", () =>
      stray(REALLOCATED)?.note === "vm-new" ? stray(REALLOCATED) : undefined,
    );
    expect(tracked.allocationId, "another allocation id").not.toBe(firstId);

    const late = await until("the new allocation is released after a grace period of its own", () =>
      releaseOf(REALLOCATED, "vm-new"),
    );
    expect(Date.parse(late.time), "a whole grace period after the new allocation").toBeGreaterThanOrEqual(
      reallocatedAtMs + GRACE_MS - 250,
    );
    expect(
      audit()
        .filter((r) => r.ip === REALLOCATED)
        .map((r) => r.note),
      "each allocation released once: the old one by the other client, the new one by the operator",
    ).toEqual([`host ${REALLOCATED}`, "vm-new"]);
  }, 30_000);
});
