/**
 * The one poll loop of the tests: waits for something that real I/O brings about (a server's
 * answer, a file event, another process), never for time itself to pass: a test that needs time
 * to pass moves a FakeClock (src/util/clock.ts) instead.
 */

export interface WaitOptions {
  /** give up after this long (wall time); default 30 s */
  timeoutMs?: number;
  /** the longest pause between two checks; default 100 ms (the first pauses are shorter) */
  intervalMs?: number;
}

/** What a check returns while the awaited thing has not happened yet. */
type NotYet = undefined | false;

/**
 * Calls `check` until it returns something other than undefined or false, and returns that; a
 * check that throws counts as not yet. Throws on timeout, naming `what`, with the last error as
 * its cause. Pauses start at 5 ms and double up to `intervalMs`, so a quick event costs little
 * and a slow one does not flood a server with polls.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | NotYet | Promise<T | NotYet>,
  options: WaitOptions = {},
): Promise<Exclude<T, NotYet>> {
  const { timeoutMs = 30_000, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  let pauseMs = Math.min(5, intervalMs);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Exclude<T, NotYet>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    pauseMs = Math.min(pauseMs * 2, intervalMs);
  }
}
