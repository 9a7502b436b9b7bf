/**
 * A manager's URL as the identity of the manager it names: two NSXManager objects (or a Secret's
 * binding, or a remembered original tenant) name the same manager when their URLs are the same
 * here. Scheme and host in lower case (URL does that), the scheme's default port dropped (URL does
 * that too), no query, fragment or credentials, and no trailing slash on the path.
 */
export function normalizeManagerUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  const path = url.pathname.replace(/\/+$/, "");
  return `${url.protocol}//${url.host}${path}`;
}
