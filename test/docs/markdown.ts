/** Reading Markdown tables, for the docs checks. */

/** The cells of a Markdown table row: split on pipes that are not escaped, trimmed. */
export function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}
