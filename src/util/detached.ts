/**
 * A copy of `text` that keeps nothing else alive. V8 keeps a substring of 13 characters or more as
 * a slice of the string it was cut from: a field name read from a manager's answer and kept for
 * the operator's lifetime would keep the whole answer (an edge document) in memory with it.
 */
export function detached(text: string): string {
  return Buffer.from(text, "utf8").toString("utf8");
}
