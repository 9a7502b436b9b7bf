import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AddressSet } from "../../../src/api/address-set.ts";
import type {
  IPPoolAllocationsSpec,
  IPPoolAllocationsStatus,
  ReleasedAddress,
} from "../../../src/api/types.ts";
import type { IpPool } from "../../../src/nsx/types.ts";
import type { Failure } from "../../../src/reconcile/conditions.ts";
import {
  assertReleasable,
  CAPPED_REQUEUE_MS,
  planIpPool,
  releaseTarget,
  type IpPoolPlanInput,
} from "../../../src/reconcile/ip-pool/plan.ts";
import type { KindPlan } from "../../../src/reconcile/kind.ts";
import type { ReleaseAction } from "../../../src/reconcile/plan.ts";
import { allDone, at, MINUTE, onlyDone, SECOND, T0 } from "../fixtures.ts";
import {
  allocationIdOf,
  allocations,
  pool,
  poolAllocations,
  poolPlanInput,
  recordedStray,
} from "./fixtures.ts";

interface Case {
  name: string;
  reason: string;
  spec?: Partial<IPPoolAllocationsSpec>;
  pool?: Partial<IpPool>;
  /** an address, [address, note], or [address, note, allocation id] */
  allocated: Parameters<typeof allocations>;
  previous?: IPPoolAllocationsStatus;
  now?: Date;
  oneShot?: { releaseStrays: boolean };
  writesBlockedBy?: Failure;
  want: {
    /** canonical addresses of the release actions, in order */
    released: string[];
    /** manager texts of the release actions, when they differ from the canonical ones */
    managerIps?: string[];
    stray?: string[];
    firstSeen?: Record<string, string>;
    /** address → [allocationId, note] recorded in status */
    identities?: Record<string, [string, string]>;
    /** withheld address → a part of why */
    withheld?: Record<string, string>;
    requeueAfterMs?: number | undefined;
    ready?: string;
    /** a part of Ready's message */
    readyMessage?: string;
    synced?: string;
    stalled?: boolean;
    reconciling?: boolean;
    missing?: number;
    used?: number;
    exhausted?: boolean;
    events?: string[];
  };
}

const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");
/** A previous status with these strays, each recorded as the fixtures' default allocation of its address. */
const strays = (...entries: [string, Date, string?][]): IPPoolAllocationsStatus => ({
  stray: entries.map(([ip, firstSeen, note]) => recordedStray(ip, iso(firstSeen), note)),
});

/** A plan with every action carried out: its actions and the status that follows. */
function settledPass(plan: KindPlan<ReleaseAction>) {
  return { actions: plan.actions, status: allDone(plan).status as IPPoolAllocationsStatus };
}

const cases: Case[] = [
  {
    name: "AllAllowedIsInSync",
    reason:
      "Allocations that the spec allows are never strays, and the allowed ones not allocated count as missing.",
    spec: { allowed: ["10.0.0.1-10.0.0.5"] },
    allocated: ["10.0.0.1", "10.0.0.2"],
    want: {
      released: [],
      stray: [],
      ready: "InSync",
      reconciling: false,
      missing: 3,
      used: 2,
      exhausted: false,
    },
  },
  {
    name: "NewStrayWaitsForGrace",
    reason: "A stray seen for the first time gets firstSeen = now and is only released after minStrayAge.",
    spec: { allowed: ["10.0.0.1"] },
    allocated: [["10.0.0.7", "controller-3"]],
    want: {
      released: [],
      stray: ["10.0.0.7"],
      firstSeen: { "10.0.0.7": iso(T0) },
      withheld: { "10.0.0.7": "due at 2024-05-01T12:05:00Z" },
      requeueAfterMs: 5 * MINUTE,
      ready: "ReleasesPending",
      reconciling: true,
    },
  },
  {
    name: "GraceNotYetOver",
    reason:
      "One second before minStrayAge has passed the stray is kept, and the requeue asks to come back then.",
    spec: { allowed: ["10.0.0.1"] },
    allocated: ["10.0.0.7"],
    previous: strays(["10.0.0.7", T0]),
    now: at(5 * MINUTE - SECOND),
    want: { released: [], stray: ["10.0.0.7"], requeueAfterMs: SECOND, ready: "ReleasesPending" },
  },
  {
    name: "GraceExactlyOver",
    reason: "A stray is due at exactly firstSeen + minStrayAge.",
    spec: { allowed: ["10.0.0.1"] },
    allocated: ["10.0.0.7"],
    previous: strays(["10.0.0.7", T0]),
    now: at(5 * MINUTE),
    want: {
      released: ["10.0.0.7"],
      stray: [],
      requeueAfterMs: undefined,
      ready: "InSync",
      reconciling: false,
    },
  },
  {
    name: "GraceLongOver",
    reason: "A stray older than minStrayAge is released.",
    spec: { allowed: ["10.0.0.1"], release: { minStrayAge: "90s" } },
    allocated: ["10.0.0.7"],
    previous: strays(["10.0.0.7", T0]),
    now: at(60 * MINUTE),
    want: { released: ["10.0.0.7"], stray: [] },
  },
  {
    name: "CustomGraceNotOver",
    reason: "spec.release.minStrayAge replaces the default.",
    spec: { allowed: [], release: { minStrayAge: "1h" } },
    allocated: ["10.0.0.7"],
    previous: strays(["10.0.0.7", T0]),
    now: at(59 * MINUTE),
    want: { released: [], requeueAfterMs: MINUTE },
  },
  {
    name: "FirstSeenKeptAcrossForms",
    reason:
      "firstSeen is matched by normalised address, so a manager writing IPv6 differently keeps the clock.",
    spec: { allowed: ["2001:db8::/120"] },
    pool: { ranges: [{ startAddress: "2001:db8::1", endAddress: "2001:db8::ff" }] },
    allocated: ["2001:0DB8:0:0:0:0:1:7"],
    previous: strays(["2001:db8::1:7", T0]),
    now: at(MINUTE),
    want: {
      released: [],
      stray: ["2001:db8::1:7"],
      firstSeen: { "2001:db8::1:7": iso(T0) },
      requeueAfterMs: 4 * MINUTE,
    },
  },
  {
    name: "PreviousFirstSeenNonCanonical",
    reason: "A previous status written with a non-canonical address still matches the allocation.",
    spec: { allowed: [] },
    pool: { ranges: [] },
    allocated: ["2001:db8::7"],
    previous: strays(["2001:DB8:0::7", T0]),
    now: at(5 * MINUTE),
    want: { released: ["2001:db8::7"] },
  },
  {
    name: "StrayGoneIsDropped",
    reason:
      "A stray that is no longer allocated leaves the status, so if it comes back its clock starts anew.",
    spec: { allowed: [] },
    allocated: [],
    previous: strays(["10.0.0.7", T0]),
    now: at(MINUTE),
    want: { released: [], stray: [], ready: "InSync" },
  },
  {
    name: "MaxPerSyncZeroNeverReleases",
    reason: "maxPerSync 0 means never release: strays are reported as drift, and no requeue is asked for.",
    spec: { allowed: [], release: { maxPerSync: 0 } },
    allocated: ["10.0.0.7", "10.0.0.8"],
    previous: strays(["10.0.0.7", T0], ["10.0.0.8", T0]),
    now: at(MINUTE * 10),
    want: {
      released: [],
      withheld: { "10.0.0.7": "maxPerSync is 0", "10.0.0.8": "maxPerSync is 0" },
      ready: "Drifted",
      reconciling: false,
      requeueAfterMs: undefined,
    },
  },
  {
    name: "MaxPerSyncOneTakesOldest",
    reason: "With maxPerSync 1 only the stray seen first is released; the others wait for the next pass.",
    spec: { allowed: [], release: { maxPerSync: 1 } },
    allocated: ["10.0.0.3", "10.0.0.4", "10.0.0.5"],
    previous: strays(["10.0.0.3", at(2 * MINUTE)], ["10.0.0.4", T0], ["10.0.0.5", at(MINUTE)]),
    now: at(30 * MINUTE),
    want: {
      released: ["10.0.0.4"],
      withheld: { "10.0.0.5": "maxPerSync 1 reached", "10.0.0.3": "maxPerSync 1 reached" },
      ready: "ReleasesPending",
      reconciling: true,
      // due strays held back by the cap are looked at again soon, not after the sync interval
      requeueAfterMs: CAPPED_REQUEUE_MS,
    },
  },
  {
    name: "MaxPerSyncNOldestFirst",
    reason: "With maxPerSync N the N oldest due strays are released, oldest first.",
    spec: { allowed: [], release: { maxPerSync: 3 } },
    allocated: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"],
    previous: strays(
      ["10.0.0.1", at(4 * MINUTE)],
      ["10.0.0.2", at(3 * MINUTE)],
      ["10.0.0.3", at(2 * MINUTE)],
      ["10.0.0.4", at(1 * MINUTE)],
      ["10.0.0.5", T0],
    ),
    now: at(30 * MINUTE),
    want: { released: ["10.0.0.5", "10.0.0.4", "10.0.0.3"], stray: ["10.0.0.2", "10.0.0.1"] },
  },
  {
    name: "TieBrokenByAddressValue",
    reason:
      "Strays seen at the same time are taken in address order by value, not by text (10.0.0.9 before 10.0.0.10).",
    spec: { allowed: [], release: { maxPerSync: 2 } },
    allocated: ["10.0.0.10", "10.0.0.9", "10.0.0.100"],
    previous: strays(["10.0.0.10", T0], ["10.0.0.9", T0], ["10.0.0.100", T0]),
    now: at(10 * MINUTE),
    want: { released: ["10.0.0.9", "10.0.0.10"] },
  },
  {
    name: "NotDueDoesNotTakeCapSlot",
    reason: "A stray still in its grace period does not use up a maxPerSync slot of a due one.",
    spec: { allowed: [], release: { maxPerSync: 1 } },
    allocated: ["10.0.0.3", "10.0.0.4"],
    previous: strays(["10.0.0.4", T0]),
    now: at(10 * MINUTE),
    want: { released: ["10.0.0.4"], stray: ["10.0.0.3"], requeueAfterMs: 5 * MINUTE },
  },
  {
    name: "ObserveReleasesNothing",
    reason:
      "Observe withholds every release and reports what Enforce would release, without asking for a requeue.",
    spec: { allowed: [], managementPolicy: "Observe", release: { maxPerSync: 1 } },
    allocated: ["10.0.0.7", "10.0.0.8", "10.0.0.9"],
    previous: strays(["10.0.0.7", T0], ["10.0.0.8", at(MINUTE)]),
    now: at(10 * MINUTE),
    want: {
      released: [],
      withheld: {
        "10.0.0.7": "would release: managementPolicy Observe",
        "10.0.0.8": "maxPerSync 1",
        "10.0.0.9": "due at",
      },
      ready: "Drifted",
      reconciling: false,
      requeueAfterMs: undefined,
    },
  },
  {
    name: "OneShotWithoutFlagReports",
    reason: "A one-shot run cannot observe minStrayAge: without releaseStrays it only reports.",
    spec: { allowed: [] },
    allocated: ["10.0.0.7"],
    previous: strays(["10.0.0.7", T0]),
    now: at(10 * MINUTE),
    oneShot: { releaseStrays: false },
    want: {
      released: [],
      withheld: { "10.0.0.7": "--release-strays" },
      ready: "Drifted",
      requeueAfterMs: undefined,
    },
  },
  {
    name: "OneShotWithFlagSkipsGrace",
    reason: "A one-shot run with releaseStrays releases strays seen just now, still capped by maxPerSync.",
    spec: { allowed: [], release: { maxPerSync: 2 } },
    allocated: ["10.0.0.9", "10.0.0.7", "10.0.0.8"],
    oneShot: { releaseStrays: true },
    want: {
      released: ["10.0.0.7", "10.0.0.8"],
      withheld: { "10.0.0.9": "maxPerSync 2" },
      requeueAfterMs: undefined,
    },
  },
  {
    name: "OneShotObserveStillObserves",
    reason: "releaseStrays does not override an Observe policy.",
    spec: { allowed: [], managementPolicy: "Observe" },
    allocated: ["10.0.0.7"],
    oneShot: { releaseStrays: true },
    want: { released: [], withheld: { "10.0.0.7": "Observe" } },
  },
  {
    name: "Ipv6NonCanonicalFromManager",
    reason: "Manager IPv6 text in any form is compared by value; the DELETE uses the manager's own text.",
    spec: { allowed: ["2001:db8::/125"] },
    pool: {
      ranges: [{ startAddress: "2001:db8::", endAddress: "2001:db8::ffff" }],
      totalAddressCount: 65536,
    },
    allocated: ["2001:DB8:0:0:0:0:0:1", "2001:0db8::0:1:0", "2001:db8::7"],
    previous: strays(["2001:db8::1:0", T0]),
    now: at(6 * MINUTE),
    want: { released: ["2001:db8::1:0"], managerIps: ["2001:0db8::0:1:0"], stray: [], missing: 6 },
  },
  {
    name: "Ipv4RangesAndCidrs",
    reason: "Allowed CIDRs and ranges cover exactly their addresses; neighbours just outside are strays.",
    spec: { allowed: ["10.0.0.0/29", "10.0.0.20-10.0.0.22"] },
    pool: { ranges: [{ startAddress: "10.0.0.1", endAddress: "10.0.0.30" }], totalAddressCount: 30 },
    allocated: ["10.0.0.7", "10.0.0.8", "10.0.0.21", "10.0.0.23", "10.0.0.19"],
    want: { released: [], stray: ["10.0.0.8", "10.0.0.19", "10.0.0.23"], missing: 8 },
  },
  {
    name: "MixedFamilies",
    reason: "IPv4 and IPv6 allocations of one pool are judged each against its own family.",
    spec: { allowed: ["10.0.0.1", "2001:db8::1"] },
    allocated: ["10.0.0.1", "2001:db8::1", "2001:db8::2", "10.0.0.2"],
    want: { released: [], stray: ["10.0.0.2", "2001:db8::2"] },
  },
  {
    name: "UnparsableNeverReleased",
    reason:
      "An address whose text cannot be parsed (a leading zero) cannot be proven not allowed: reported, never released.",
    spec: { allowed: ["10.0.0.7"] },
    allocated: ["10.0.0.07"],
    previous: strays(["10.0.0.07", T0]),
    now: at(MINUTE * 30),
    oneShot: undefined,
    want: {
      released: [],
      stray: ["10.0.0.07"],
      withheld: { "10.0.0.07": "not an IP address" },
      ready: "Drifted",
      readyMessage: '"10.0.0.07" is not an IP address: never released',
    },
  },
  {
    name: "UnparsableStopsOnlyItsOwnDecision",
    reason:
      "One allocation whose address cannot be read is never released; the other strays of the pool are decided and released as usual, and Ready says so.",
    spec: { allowed: ["10.0.0.1"] },
    allocated: ["10.0.0.07", "10.0.0.8", "10.0.0.9"],
    previous: strays(["10.0.0.07", T0], ["10.0.0.8", T0], ["10.0.0.9", T0]),
    now: at(MINUTE * 30),
    want: {
      released: ["10.0.0.8", "10.0.0.9"],
      withheld: { "10.0.0.07": "not an IP address" },
      readyMessage: "the other strays are released as usual",
    },
  },
  {
    name: "HeldWhileSourceInvalid",
    reason:
      "While the manifest that declares the object does not load, no stray is released however long it has been stray: Drifted (not pending), Synced=False and Stalled say why.",
    spec: { allowed: ["10.0.0.1-10.0.0.3"] },
    allocated: ["10.0.0.1", "10.0.0.4", "10.0.0.5", "10.0.0.6"],
    previous: strays(["10.0.0.4", T0], ["10.0.0.5", T0], ["10.0.0.6", T0]),
    now: at(MINUTE * 600),
    writesBlockedBy: { reason: "SourceInvalid", message: "pools.yaml:7: invalid YAML" },
    want: {
      released: [],
      withheld: { "10.0.0.4": "held: pools.yaml:7", "10.0.0.5": "held", "10.0.0.6": "held" },
      ready: "Drifted",
      synced: "SourceInvalid",
      stalled: true,
      reconciling: false,
      requeueAfterMs: undefined,
    },
  },
  {
    name: "HoldDoesNotMaskGrace",
    reason: "Strays still in their grace period are reported as waiting for it, held or not.",
    spec: { allowed: [] },
    allocated: ["10.0.0.4"],
    now: T0,
    writesBlockedBy: { reason: "ConflictUndecided", message: "older object undecided" },
    want: { released: [], withheld: { "10.0.0.4": "due at" }, synced: "ConflictUndecided", stalled: false },
  },
  {
    name: "SameAddressListedTwice",
    reason: "Two texts of one address are one allocation: counted once and released once.",
    spec: { allowed: [] },
    allocated: ["2001:db8::9", "2001:DB8::9"],
    previous: strays(["2001:db8::9", T0]),
    now: at(MINUTE * 30),
    want: { released: ["2001:db8::9"], used: 0 },
  },
  {
    name: "ExhaustedPool",
    reason: "used == total sets PoolExhausted=True and records one warning event.",
    spec: { allowed: ["10.0.0.1-10.0.0.3"] },
    pool: { totalAddressCount: 3, ranges: [{ startAddress: "10.0.0.1", endAddress: "10.0.0.3" }] },
    allocated: ["10.0.0.1", "10.0.0.2", "10.0.0.3"],
    want: { released: [], exhausted: true, events: ["PoolExhausted"], missing: 0, ready: "InSync" },
  },
  {
    name: "ExhaustedAlreadyReported",
    reason: "The exhaustion event is recorded on the transition only, not on every pass.",
    spec: { allowed: ["10.0.0.1-10.0.0.3"] },
    pool: { totalAddressCount: 3, ranges: [{ startAddress: "10.0.0.1", endAddress: "10.0.0.3" }] },
    allocated: ["10.0.0.1", "10.0.0.2", "10.0.0.3"],
    previous: {
      conditions: [
        {
          type: "PoolExhausted",
          status: "True",
          reason: "PoolExhausted",
          message: "",
          lastTransitionTime: iso(T0),
        },
      ],
    },
    want: { released: [], exhausted: true, events: [] },
  },
  {
    name: "ReleaseRelievesExhaustion",
    reason: "A release in this pass frees an address, so the pool is no longer exhausted.",
    spec: { allowed: ["10.0.0.1"] },
    pool: { totalAddressCount: 2, ranges: [{ startAddress: "10.0.0.1", endAddress: "10.0.0.2" }] },
    allocated: ["10.0.0.1", "10.0.0.2"],
    previous: strays(["10.0.0.2", T0]),
    now: at(10 * MINUTE),
    want: { released: ["10.0.0.2"], exhausted: false, used: 1, events: [] },
  },
  {
    name: "ReallocatedAddressStartsAnew",
    reason:
      "An address released by someone else and allocated again carries a new id: it is a new stray whose grace period starts now, while the untouched stray beside it is released on time.",
    spec: { allowed: [] },
    allocated: [["10.0.0.7", "vm-new", "allocatedipaddress-99"], "10.0.0.8"],
    previous: strays(["10.0.0.7", T0, "controller-3"], ["10.0.0.8", T0]),
    now: at(10 * MINUTE),
    want: {
      released: ["10.0.0.8"],
      stray: ["10.0.0.7"],
      firstSeen: { "10.0.0.7": iso(at(10 * MINUTE)) },
      withheld: { "10.0.0.7": "due at 2024-05-01T12:15:00Z" },
      requeueAfterMs: 5 * MINUTE,
      ready: "ReleasesPending",
    },
  },
  {
    name: "SameIdNewNoteStartsAnew",
    reason:
      "The note is a second witness: the same id with another note is not trusted to be the allocation whose grace period ran.",
    spec: { allowed: [] },
    allocated: [["10.0.0.7", "vm-new"]],
    previous: strays(["10.0.0.7", T0, "controller-3"]),
    now: at(10 * MINUTE),
    want: { released: [], stray: ["10.0.0.7"], firstSeen: { "10.0.0.7": iso(at(10 * MINUTE)) } },
  },
  {
    name: "SameAllocationKeepsItsClock",
    reason: "The same id and note keep the firstSeen recorded for them.",
    spec: { allowed: [] },
    allocated: [["10.0.0.7", "controller-3"]],
    previous: strays(["10.0.0.7", T0, "controller-3"]),
    now: at(4 * MINUTE),
    want: { released: [], firstSeen: { "10.0.0.7": iso(T0) }, requeueAfterMs: MINUTE },
  },
  {
    name: "RecordedWithoutIdStartsAnew",
    reason:
      "A stray recorded before ids were tracked cannot tell which allocation it timed: its grace period starts anew rather than being lent to whatever holds the address now.",
    spec: { allowed: [] },
    allocated: ["10.0.0.7"],
    previous: { stray: [{ ip: "10.0.0.7", firstSeen: iso(T0) }] },
    now: at(10 * MINUTE),
    want: { released: [], firstSeen: { "10.0.0.7": iso(at(10 * MINUTE)) } },
  },
  {
    name: "ManagerWithoutIdsTrackedByNote",
    reason: "A manager that lists no ids leaves the note as the only witness: the same note keeps the clock.",
    spec: { allowed: [] },
    allocated: [["10.0.0.7", "controller-3", ""]],
    previous: { stray: [{ ip: "10.0.0.7", note: "controller-3", firstSeen: iso(T0) }] },
    now: at(10 * MINUTE),
    want: { released: ["10.0.0.7"] },
  },
  {
    name: "StatusShowsTrackedIdentity",
    reason:
      "Status records the allocation id and note it times, so a restart compares with the same identity.",
    spec: { allowed: [] },
    allocated: [["10.0.0.7", "controller-3", "allocatedipaddress-4"]],
    want: { released: [], identities: { "10.0.0.7": ["allocatedipaddress-4", "controller-3"] } },
  },
  {
    name: "MissingClampedToSafeInteger",
    reason:
      "An allowed /64 inside a huge IPv6 range has more missing addresses than a JSON number holds exactly.",
    spec: { allowed: ["2001:db8::/64"] },
    pool: { ranges: [{ startAddress: "2001:db8::", endAddress: "2001:db8::ffff:ffff:ffff:ffff" }] },
    allocated: ["2001:db8::1"],
    want: { released: [], missing: Number.MAX_SAFE_INTEGER },
  },
  {
    name: "MissingOnlyInsidePoolRanges",
    reason:
      "Allowed addresses outside the pool's ranges can never be allocated from it, so they are not missing.",
    spec: { allowed: ["10.0.0.1-10.0.0.20"] },
    allocated: ["10.0.0.1", "10.0.0.15"],
    want: { released: [], missing: 9, stray: [] },
  },
];

function input(c: Case): IpPoolPlanInput {
  return poolPlanInput({
    object: poolAllocations(c.spec),
    observed: { pool: pool(c.pool), allocations: allocations(...c.allocated) },
    previous: c.previous,
    now: c.now ?? T0,
    oneShot: c.oneShot,
    writesBlockedBy: c.writesBlockedBy,
  });
}

describe("planIpPool", () => {
  it.each(cases)("$name", (c) => {
    const plan = planIpPool(input(c));
    const settled = allDone(plan);
    const { want } = c;
    expect(
      plan.actions.map((a) => a.ip),
      c.reason,
    ).toEqual(want.released);
    if (want.managerIps)
      expect(
        plan.actions.map((a) => a.managerIp),
        c.reason,
      ).toEqual(want.managerIps);
    const status = settled.status as IPPoolAllocationsStatus;
    expect(status.strayCount, "strayCount counts the stray list (a printer column)").toBe(
      status.stray?.length,
    );
    if (want.stray)
      expect(
        status.stray?.map((s) => s.ip),
        c.reason,
      ).toEqual(want.stray);
    for (const [ip, firstSeen] of Object.entries(want.firstSeen ?? {})) {
      expect(status.stray?.find((s) => s.ip === ip)?.firstSeen, c.reason).toBe(firstSeen);
    }
    for (const [ip, [allocationId, note]] of Object.entries(want.identities ?? {})) {
      expect(
        status.stray?.find((s) => s.ip === ip),
        c.reason,
      ).toMatchObject({ allocationId, note });
    }
    for (const [ip, why] of Object.entries(want.withheld ?? {})) {
      expect(plan.withheld.find((w) => w.action.ip === ip)?.why, c.reason).toContain(why);
    }
    if ("requeueAfterMs" in want) expect(plan.requeueAfterMs, c.reason).toBe(want.requeueAfterMs);
    const condition = (type: string) => status.conditions?.find((x) => x.type === type);
    if (want.ready) expect(condition("Ready")?.reason, c.reason).toBe(want.ready);
    if (want.readyMessage) expect(condition("Ready")?.message, c.reason).toContain(want.readyMessage);
    expect(condition("Synced")?.reason, c.reason).toBe(want.synced ?? "ReconcileSuccess");
    if (want.stalled !== undefined)
      expect(condition("Stalled")?.status === "True", c.reason).toBe(want.stalled);
    if (want.reconciling !== undefined)
      expect(condition("Reconciling")?.status === "True", c.reason).toBe(want.reconciling);
    if (want.missing !== undefined) expect(status.missing, c.reason).toBe(want.missing);
    if (want.used !== undefined) expect(status.usedAddressCount, c.reason).toBe(want.used);
    if (want.exhausted !== undefined)
      expect(condition("PoolExhausted")?.status, c.reason).toBe(want.exhausted ? "True" : "False");
    if (want.events)
      expect(
        settled.events.map((e) => e.reason),
        c.reason,
      ).toEqual(want.events);
    // the planner never plans an allowed address, whatever the case
    const allowed = AddressSet.parse(c.spec?.allowed ?? []);
    for (const action of plan.actions) expect(allowed.has(action.ip), c.reason).toBe(false);
  });
});

describe("a planned release after a fresh list (a 409, a 'not allocated'): one rule for run and apply", () => {
  const object = poolAllocations({ allowed: ["10.0.0.1"], release: { minStrayAge: "5m", maxPerSync: 10 } });
  /** run: the stray recorded long enough ago; apply --release-strays: no grace period to wait out */
  const MODES = [
    { mode: "run", previous: strays(["10.0.0.7", T0, "ctl-3"]), now: at(10 * MINUTE), oneShot: undefined },
    { mode: "apply --release-strays", previous: undefined, now: T0, oneShot: { releaseStrays: true } },
  ];
  const CASES: {
    name: string;
    reason: string;
    fresh: Parameters<typeof allocations>;
    /** the planned release is found again in the fresh plan: its DELETE is sent again */
    found: boolean;
    heldBack?: boolean;
  }[] = [
    {
      name: "SameAllocation",
      reason: "the same id and note: the planned allocation is still there, and is released",
      fresh: [["10.0.0.7", "ctl-3"]],
      found: true,
    },
    {
      name: "NewIdSameNote",
      reason:
        "another allocation of the address (a new id) is another machine's: never released in its place",
      fresh: [["10.0.0.7", "ctl-3", "allocatedipaddress-99"]],
      found: false,
      heldBack: true,
    },
    {
      name: "NewNoteSameId",
      reason: "the note is the second witness: another note is another allocation",
      fresh: [["10.0.0.7", "vm-new"]],
      found: false,
      heldBack: true,
    },
    {
      name: "AddressGone",
      reason: "released by someone else: nothing to do, and nothing left behind",
      fresh: [],
      found: false,
      heldBack: false,
    },
  ];
  it.each(MODES.flatMap((m) => CASES.map((c) => ({ ...m, ...c }))))("$mode, $name: $reason", (c) => {
    const plan = (allocated: Parameters<typeof allocations>) =>
      planIpPool(
        poolPlanInput({
          object,
          observed: { pool: pool(), allocations: allocations(...allocated) },
          previous: c.previous,
          now: c.now,
          oneShot: c.oneShot,
        }),
      );
    const [planned] = plan([["10.0.0.7", "ctl-3"]]).actions;
    expect(planned?.allocationId, "the release planned names its allocation").toBe(
      allocationIdOf("10.0.0.7"),
    );
    const fresh = plan(c.fresh);
    const again = fresh.actions.find((a) => releaseTarget(a) === releaseTarget(planned!));
    expect(again !== undefined, c.reason).toBe(c.found);
    if (c.found) return;
    const settled = fresh.settle({ done: [], dropped: [planned!], refused: [] });
    expect(
      settled.dropped?.map((d) => d.heldBack),
      c.reason,
    ).toEqual([c.heldBack]);
    expect(
      settled.events.map((e) => e.reason),
      c.reason,
    ).toEqual(c.heldBack === true ? ["AllocationReplaced"] : []);
    if (c.heldBack === true) expect(settled.dropped?.[0]?.why).toContain("another allocation there");
  });
});

describe("pool status across passes", () => {
  const object = poolAllocations({ allowed: ["10.0.0.1"] });
  const pass = (allocated: string[], previous: IPPoolAllocationsStatus | undefined, now: Date) =>
    settledPass(
      planIpPool(
        poolPlanInput({
          object,
          observed: { pool: pool(), allocations: allocations(...allocated) },
          previous,
          now,
        }),
      ),
    );

  it("keeps firstSeen while the stray stays, and starts anew when it comes back", () => {
    const first = pass(["10.0.0.7"], undefined, T0);
    const second = pass(["10.0.0.7"], first.status, at(MINUTE));
    expect(second.status.stray?.[0]?.firstSeen, "the clock survives a pass").toBe(iso(T0));
    const gone = pass([], second.status, at(2 * MINUTE));
    expect(gone.status.stray, "a stray that left is forgotten").toEqual([]);
    const back = pass(["10.0.0.7"], gone.status, at(3 * MINUTE));
    expect(back.status.stray?.[0]?.firstSeen, "a stray that came back starts anew").toBe(iso(at(3 * MINUTE)));
    expect(back.actions, "and is not due").toEqual([]);
  });

  it("a stray first seen under Observe is due under Enforce from then: the switch releases what waited minStrayAge", () => {
    const passWith = (
      managementPolicy: "Observe" | "Enforce",
      generation: number,
      previous: IPPoolAllocationsStatus | undefined,
      now: Date,
    ) =>
      settledPass(
        planIpPool(
          poolPlanInput({
            object: poolAllocations({ allowed: ["10.0.0.1"], managementPolicy }, { generation }),
            observed: { pool: pool(), allocations: allocations("10.0.0.7", "10.0.0.8") },
            previous,
            now,
          }),
        ),
      );
    const observed = passWith("Observe", 1, undefined, T0);
    expect(observed.actions, "Observe releases nothing").toEqual([]);
    const later = passWith("Observe", 1, observed.status, at(10 * MINUTE));
    expect(
      later.status.stray?.map((s) => s.firstSeen),
      "Observe records firstSeen",
    ).toEqual([iso(T0), iso(T0)]);
    const enforced = passWith("Enforce", 2, later.status, at(11 * MINUTE));
    expect(
      enforced.actions.map((a) => a.ip),
      "docs/resources.md: the grace period counts from the firstSeen that Observe recorded",
    ).toEqual(["10.0.0.7", "10.0.0.8"]);
  });

  it("keeps lastTransitionTime of Ready while it stays False, and moves it when it turns True", () => {
    const first = pass(["10.0.0.7"], undefined, T0);
    const second = pass(["10.0.0.7"], first.status, at(MINUTE));
    const ready = (s: IPPoolAllocationsStatus) => s.conditions?.find((c) => c.type === "Ready");
    expect(ready(second.status)?.lastTransitionTime, "status unchanged: time kept").toBe(iso(T0));
    const released = pass(["10.0.0.7"], second.status, at(6 * MINUTE));
    expect(ready(released.status), "released: Ready turns True now").toMatchObject({
      status: "True",
      lastTransitionTime: iso(at(6 * MINUTE)),
    });
  });

  it("keeps the last 20 releases, newest last", () => {
    const history: ReleasedAddress[] = Array.from({ length: 20 }, (_, i) => ({
      ip: `10.0.1.${i}`,
      time: iso(T0),
    }));
    const plan = pass(
      ["10.0.0.7"],
      { released: history, stray: [recordedStray("10.0.0.7", iso(T0))] },
      at(10 * MINUTE),
    );
    expect(plan.status.released, "capped at SPEC_DEFAULTS.releasedHistory").toHaveLength(20);
    expect(plan.status.released?.at(-1), "newest last").toEqual({
      ip: "10.0.0.7",
      time: iso(at(10 * MINUTE)),
    });
    expect(plan.status.released?.[0]?.ip, "oldest dropped").toBe("10.0.1.1");
  });

  it("statusAfter keeps a stray whose release was not done", () => {
    const inputs = poolPlanInput({
      object: poolAllocations({ allowed: [] }),
      observed: { pool: pool(), allocations: allocations(["10.0.0.7", "ctl"], "10.0.0.8") },
      previous: strays(["10.0.0.7", T0, "ctl"], ["10.0.0.8", T0]),
      now: at(10 * MINUTE),
    });
    const plan = planIpPool(inputs);
    const status = onlyDone(plan, plan.actions.slice(0, 1)).status as IPPoolAllocationsStatus;
    expect(status.stray, "the undone release stays stray with its firstSeen").toEqual([
      recordedStray("10.0.0.8", iso(T0)),
    ]);
    expect(status.released, "only the done one is history").toEqual([
      { ip: "10.0.0.7", note: "ctl", time: iso(at(10 * MINUTE)) },
    ]);
    expect(status.conditions?.find((c) => c.type === "Ready")?.reason, "left for the next pass").toBe(
      "ReleasesPending",
    );
  });
});

describe("assertReleasable", () => {
  const allowed = AddressSet.parse(["10.0.0.0/30", "2001:db8::1"]);
  const action = (ip: string, managerIp = ip) => ({
    type: "releaseAddress" as const,
    poolId: "p",
    ip,
    managerIp,
    firstSeen: iso(T0),
  });
  it.each([
    { name: "AllowedIpv4", reason: "an address inside an allowed CIDR is refused", a: action("10.0.0.2") },
    {
      name: "AllowedIpv6AnyForm",
      reason: "an allowed address in another text form is refused",
      a: action("2001:db8::1", "2001:DB8:0::1"),
    },
    {
      name: "Unparsable",
      reason: "text that is not an address is refused",
      a: action("10.0.0.09", "10.0.0.09"),
    },
    {
      name: "Mismatch",
      reason: "a manager text that is not the planned address is refused",
      a: action("10.0.0.9", "10.0.0.8"),
    },
  ])("refuses $name", ({ reason, a }) => {
    expect(() => assertReleasable(allowed, a), reason).toThrow(/refusing to release/);
  });
  it("lets a stray through", () => {
    expect(() => assertReleasable(allowed, action("10.0.0.9"))).not.toThrow();
  });
});

describe("never releases an allowed address (property)", () => {
  // a small space so that allowed entries and allocations collide often
  const v4 = fc.integer({ min: 0, max: 63 }).map((n) => `10.0.0.${n}`);
  const v6 = fc
    .tuple(fc.integer({ min: 0, max: 63 }), fc.constantFrom("lower", "upper", "long"))
    .map(([n, form]) => {
      const hex = n.toString(16);
      return form === "lower"
        ? `2001:db8::${hex}`
        : form === "upper"
          ? `2001:DB8::${hex.toUpperCase()}`
          : `2001:0db8:0:0:0:0:0:${hex}`;
    });
  const entry = fc.oneof(
    v4,
    v6,
    fc
      .tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 8 }))
      .map(([a, n]) => `10.0.0.${a}-10.0.0.${Math.min(63, a + n)}`),
    fc
      .integer({ min: 26, max: 32 })
      .chain((bits) => fc.integer({ min: 0, max: 63 }).map((a) => `10.0.0.${a}/${bits}`)),
    fc
      .integer({ min: 122, max: 128 })
      .chain((bits) => fc.integer({ min: 0, max: 63 }).map((a) => `2001:db8::${a.toString(16)}/${bits}`)),
  );

  it("holds for random allowed sets, allocations, histories and modes", () => {
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 8 }),
        fc.array(fc.oneof(v4, v6), { maxLength: 24 }),
        fc.array(fc.tuple(fc.oneof(v4, v6), fc.integer({ min: 0, max: 20 })), { maxLength: 10 }),
        fc.record({
          maxPerSync: fc.integer({ min: 0, max: 30 }),
          oneShot: fc.constantFrom(undefined, { releaseStrays: true }, { releaseStrays: false }),
          elapsedMinutes: fc.integer({ min: 0, max: 30 }),
        }),
        (allowedEntries, allocated, history, { maxPerSync, oneShot, elapsedMinutes }) => {
          const plan = planIpPool(
            poolPlanInput({
              object: poolAllocations({ allowed: allowedEntries, release: { maxPerSync } }),
              observed: {
                pool: pool({ ranges: [{ startAddress: "10.0.0.0", endAddress: "10.0.0.63" }] }),
                allocations: allocations(...allocated),
              },
              previous: { stray: history.map(([ip, m]) => recordedStray(ip, iso(at(m * MINUTE)))) },
              now: at(elapsedMinutes * MINUTE),
              oneShot,
            }),
          );
          const allowed = AddressSet.parse(allowedEntries);
          for (const action of plan.actions) {
            if (allowed.has(action.ip) || allowed.has(action.managerIp)) return false;
            assertReleasable(allowed, action);
          }
          return plan.actions.length <= maxPerSync;
        },
      ),
      { numRuns: 500 },
    );
  });
});
