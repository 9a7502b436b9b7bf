/** Small helpers for plain objects. */

/** A copy without the keys whose value is undefined, so that statuses compare and print cleanly. */
export function omitUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
