/**
 * One operator per status file (issue 28): the lock beside it. Who holds it, in a table with a
 * reason per case (a live process, one gone, a pid reused, another host that refreshes or not,
 * a lock being written); losing it; and two real `run` processes, the second refused while the
 * first lives and taking over once it was killed with SIGKILL.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nopLogger } from "../../src/controller/controller.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import { StatusFileLock, StatusFileLockedError, type LockHolder } from "../../src/source/status-lock.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { spawnOperator, type OperatorProcess } from "../faults/operator-process.ts";
import { waitFor } from "../support/wait.ts";

const SECOND = 1_000;

/** This process as the lock names it (what a lock this process took says), for lock files written by hand. */
async function ownHolder(): Promise<LockHolder> {
  const dir = mkdtempSync(join(tmpdir(), "nsxv-lock-self-"));
  try {
    const lock = await StatusFileLock.acquire(join(dir, "status.json"));
    const holder = JSON.parse(readFileSync(lock.lockFile, "utf8")) as LockHolder;
    await lock.release();
    return holder;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** a process that is alive for the whole test: its pid and start time */
async function liveChild(): Promise<{ pid: number; start: number; kill: () => void }> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
  const start = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  return { pid: child.pid!, start, kill: () => child.kill("SIGKILL") };
}

describe("the status file's lock", () => {
  let dir = "";
  let file = "";
  const cleanup: (() => void | Promise<void>)[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "nsxv-lock-"));
    file = join(dir, "status.json");
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
    rmSync(dir, { recursive: true, force: true });
  });

  const linux = existsSync("/proc/self/stat");

  it.skipIf(!linux)("decides whether a lock file's holder still holds it", async () => {
    const self = await ownHolder();
    const alive = await liveChild();
    cleanup.push(alive.kill);
    const cases: {
      name: string;
      reason: string;
      /** the lock file's text, and its age in ms */
      lock: () => { text: string; ageMs: number };
      held: boolean;
    }[] = [
      {
        name: "LiveProcess",
        reason: "a process of this machine with the pid and start time the lock names",
        lock: () => ({ text: JSON.stringify({ ...self, pid: alive.pid, start: alive.start }), ageMs: 0 }),
        held: true,
      },
      {
        name: "LiveProcessOldLock",
        reason: "on this machine the pid says, however long ago the lock was refreshed",
        lock: () => ({
          text: JSON.stringify({ ...self, pid: alive.pid, start: alive.start }),
          ageMs: 3_600 * SECOND,
        }),
        held: true,
      },
      {
        name: "KilledProcess",
        reason: "kill -9 left the lock: no process has that pid",
        lock: () => ({ text: JSON.stringify({ ...self, pid: 2 ** 22 + 7 }), ageMs: 0 }),
        held: false,
      },
      {
        name: "PidReused",
        reason: "a live process has the pid, but started at another time: not the holder",
        lock: () => ({ text: JSON.stringify({ ...self, pid: alive.pid, start: alive.start - 1 }), ageMs: 0 }),
        held: false,
      },
      {
        name: "OwnPid",
        reason: "a container restarted: the holder had the pid this process has now",
        lock: () => ({ text: JSON.stringify({ ...self, start: self.start - 1 }), ageMs: 0 }),
        held: false,
      },
      {
        name: "OtherHostRefreshing",
        reason: "another host's holder refreshed the lock 20 s ago: alive",
        lock: () => ({ text: JSON.stringify({ ...self, host: `${hostname()}-other` }), ageMs: 20 * SECOND }),
        held: true,
      },
      {
        name: "OtherHostSilent",
        reason: "another host's holder has not refreshed for 2 minutes: gone",
        lock: () => ({ text: JSON.stringify({ ...self, host: `${hostname()}-other` }), ageMs: 120 * SECOND }),
        held: false,
      },
      {
        name: "OtherPidNamespace",
        reason: "another container on this host: its pids are not ours, the refresh says",
        lock: () => ({
          text: JSON.stringify({ ...self, machine: `${self.machine}-other` }),
          ageMs: 120 * SECOND,
        }),
        held: false,
      },
      {
        name: "BeingWritten",
        reason: "an empty lock a second old: its creator is writing it",
        lock: () => ({ text: "", ageMs: SECOND }),
        held: true,
      },
      {
        name: "Garbage",
        reason: "an unreadable lock a minute old: nobody is writing it",
        lock: () => ({ text: "{not json", ageMs: 60 * SECOND }),
        held: false,
      },
    ];
    for (const c of cases) {
      const { text, ageMs } = c.lock();
      writeFileSync(`${file}.lock`, text);
      const then = new Date(Date.now() - ageMs);
      utimesSync(`${file}.lock`, then, then);
      const outcome = await StatusFileLock.acquire(file, { logger: nopLogger }).then(
        async (lock) => {
          await lock.release();
          return "taken";
        },
        (error: unknown) => error,
      );
      if (c.held) {
        expect(outcome, `${c.name}: ${c.reason}`).toBeInstanceOf(StatusFileLockedError);
        expect((outcome as Error).message, c.name).toContain(file);
      } else expect(outcome, `${c.name}: ${c.reason}`).toBe("taken");
      rmSync(`${file}.lock`, { force: true });
    }
  });

  it("names the file and the holder when refused, and removes its lock on release", async () => {
    const alive = await liveChild();
    cleanup.push(alive.kill);
    const first = await StatusFileLock.acquire(file);
    const holder = JSON.parse(readFileSync(`${file}.lock`, "utf8")) as LockHolder;
    // the holder made a child process: its pid, as if it were another operator
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ ...holder, pid: alive.pid, start: linux ? alive.start : 0 }),
    );
    const refused = await StatusFileLock.acquire(file).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StatusFileLockedError);
    expect((refused as Error).message).toContain(
      `the status file ${file} is held by process ${alive.pid} on ${hostname()}`,
    );
    writeFileSync(`${file}.lock`, JSON.stringify(holder));
    await first.release();
    expect(existsSync(`${file}.lock`), "released: no lock left").toBe(false);
  });

  it("refreshes the lock while held, and says it is lost when another process replaced it", async () => {
    const clock = new FakeClock();
    const lock = await StatusFileLock.acquire(file, { clock, refreshMs: 10 * SECOND, logger: nopLogger });
    cleanup.push(() => lock.release());
    const old = new Date(Date.now() - 3_600 * SECOND);
    utimesSync(lock.lockFile, old, old);
    const age = () => Date.now() - statSync(lock.lockFile).mtimeMs;
    await clock.advance(10 * SECOND);
    await waitFor("the lock refreshed", () => age() < 60 * SECOND, { timeoutMs: 5_000 });
    expect(lock.lost.aborted).toBe(false);
    // someone else's lock now
    const holder = JSON.parse(readFileSync(lock.lockFile, "utf8")) as LockHolder;
    writeFileSync(lock.lockFile, JSON.stringify({ ...holder, token: "someone-else" }));
    await clock.advance(10 * SECOND);
    await waitFor("the lock lost", () => lock.lost.aborted, { timeoutMs: 5_000 });
    await lock.release();
    expect(existsSync(lock.lockFile), "the other holder's lock is not removed").toBe(true);
  });

  it("one run per status file: a second refuses while the first lives, and takes over after kill -9", async () => {
    const sim = await startSimulator({
      state: { edges: [{ generate: { count: 1, idStart: 1, tenant: "red" } }] },
    });
    cleanup.push(() => sim.close());
    const manifests = join(dir, "m");
    await mkdir(manifests);
    await writeFile(
      join(manifests, "all.yaml"),
      `apiVersion: nsxv.io/v1alpha1
kind: NSXManager
metadata: { name: nsx }
spec: { url: "${sim.url}", credentialsSecretRef: { name: creds } }
---
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { username: admin, password: default }
---
apiVersion: nsxv.io/v1alpha1
kind: EdgeTenant
metadata: { name: web }
spec: { managerRef: { name: nsx }, edgeId: edge-1, tenant: blue, deletionPolicy: Restore }
`,
    );
    const running: OperatorProcess[] = [];
    cleanup.push(async () => {
      for (const p of running) await p.kill();
    });
    const start = () => {
      const p = spawnOperator({ manifests, statusFile: file });
      running.push(p);
      return p;
    };
    const first = start();
    await waitFor("the first one corrects the edge", () => sim.state.edge("edge-1")?.doc.tenant === "blue");

    const second = start();
    expect(await second.exited, second.stderr()).toBe(1);
    const fatal = second.logs.find((l) => l.level === 60);
    expect(fatal?.error).toContain(
      `the status file ${file} is held by process ${first.child.pid} on ${hostname()}`,
    );
    expect(
      second.logs.some((l) => l.msg === "controller started"),
      "it never ran",
    ).toBe(false);

    expect(await first.kill("SIGKILL")).toBe("SIGKILL");
    expect(existsSync(`${file}.lock`), "kill -9 left its lock").toBe(true);
    const third = start();
    await waitFor("the third one runs", () => third.logs.some((l) => l.msg === "controller started"));
    expect(third.logs.some((l) => String(l.msg).startsWith("took over the status file"))).toBe(true);
    expect(await third.kill("SIGTERM"), third.stderr()).toBe(0);
    expect(existsSync(`${file}.lock`), "a clean stop leaves no lock").toBe(false);
  }, 60_000);
});
