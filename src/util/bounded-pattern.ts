/**
 * A string check as a CRD declares one: a `pattern` and a `maxLength`. The length is checked
 * first, so a pattern never runs over a value longer than the bound.
 */
export function boundedPattern(pattern: string, maxLength: number): (value: unknown) => boolean {
  const regex = new RegExp(pattern);
  return (value) => typeof value === "string" && value.length <= maxLength && regex.test(value);
}
