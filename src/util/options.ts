/**
 * Options objects and their defaults, merged one way everywhere: a module keeps every default of
 * its options in one frozen `<THING>_DEFAULTS` object, and `withDefaults` lays the caller's
 * options over it. A key the caller set to `undefined` counts as left out (a plain spread would
 * let it erase the default), and the caller's object is never changed.
 */

/** The options once defaulted: every key of the defaults is set, the caller's other keys as given. */
export type WithDefaults<D extends object, O extends object> = Omit<O, keyof D> & {
  -readonly [K in keyof D]: K extends keyof O ? Exclude<O[K], undefined> | D[K] : D[K];
};

/** A copy without the keys whose value is undefined, so that objects compare and print cleanly. */
export function omitUndefined<T extends object>(value: T): T {
  const copy: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  // keys, not entries: no pair array per key (every pass builds its status through here)
  for (const key of Object.keys(source)) {
    const v = source[key];
    if (v === undefined) continue;
    // an own "__proto__" key (parsed JSON may have one) stays a key: assigned, it would set the prototype
    if (key === "__proto__")
      Object.defineProperty(copy, key, { value: v, enumerable: true, writable: true, configurable: true });
    else copy[key] = v;
  }
  return copy as T;
}

/** `options` over `defaults`, a new object; a key of `options` that is undefined keeps the default. */
export function withDefaults<D extends object, O extends object>(
  defaults: D,
  options: O | undefined,
): WithDefaults<D, O> {
  return { ...defaults, ...omitUndefined(options ?? ({} as O)) } as WithDefaults<D, O>;
}
