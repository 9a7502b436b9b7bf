/**
 * Which real manager each NSXManager object names: several objects (in one namespace or many) can
 * name one manager, and what belongs to a manager (its objects' ownership of edges and pools, its
 * share of the workers, its edge list) belongs to the real one, not to an object. Objects whose
 * URLs are the same (normalized) name one manager, in any namespaces; so do objects of one
 * namespace to which the manager reported the same vsmUuid (status.vsmUuid): a UUID is what a
 * server says, and a server of one's own can say any, so it never joins another namespace's
 * manager. A real manager is named `manager <the smallest of its URLs>`.
 */
import { normalizeManagerUrl } from "../api/manager-url.ts";
import { DEFAULT_NAMESPACE, type ObjectRef } from "../api/refs.ts";
import type { NSXManager, NsxvObject } from "../api/types.ts";

/** the prefix of a key that names a real manager (by its URL) */
export const REAL_MANAGER_PREFIX = "manager ";

/**
 * The real manager each NSXManager object names (`namespace/name` → `manager <url>`), by a
 * union-find over their URLs and, within a namespace, their reported UUIDs. An object whose URL
 * does not parse names none.
 */
export function realManagers(managers: readonly NSXManager[]): Map<string, string> {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    parent.set(x, root);
    return root;
  };
  const union = (a: string, b: string): void => {
    const [ra, rb] = [find(a), find(b)];
    if (ra !== rb) parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  };
  const urls = new Map<string, string>();
  for (const manager of managers) {
    const url = typeof manager.spec?.url === "string" ? normalizeManagerUrl(manager.spec.url) : undefined;
    if (url === undefined) continue;
    const node = `url ${url}`;
    if (!parent.has(node)) parent.set(node, node);
    const namespace = manager.metadata.namespace ?? DEFAULT_NAMESPACE;
    urls.set(`${namespace}/${manager.metadata.name}`, node);
    const uuid = manager.status?.vsmUuid;
    if (typeof uuid === "string" && uuid !== "") {
      const id = `uuid ${namespace} ${uuid.toLowerCase()}`;
      if (!parent.has(id)) parent.set(id, id);
      union(node, id);
    }
  }
  // a group is named by its smallest URL: "url ..." sorts before "uuid ..."
  const identities = new Map<string, string>();
  for (const [object, node] of urls)
    identities.set(object, `${REAL_MANAGER_PREFIX}${find(node).slice("url ".length)}`);
  return identities;
}

/**
 * `realManagers` over a source's NSXManagers, built again only when what it is made of (their
 * URLs and reported UUIDs) changed: cheap enough to ask for every item queued.
 */
export class RealManagerIndex {
  readonly #list: () => readonly NsxvObject[];
  #fingerprint = "";
  #identities = new Map<string, string>();

  /** `list`: every NSXManager of the source */
  constructor(list: () => readonly NsxvObject[]) {
    this.#list = list;
  }

  /** The real manager an NSXManager (`ref`) names; undefined when it is not known (gone, or its URL does not parse). */
  of(ref: ObjectRef): string | undefined {
    const managers = this.#list().filter((m): m is NSXManager => m.kind === "NSXManager");
    const fingerprint = managers
      .map(
        (m) => `${m.metadata.namespace ?? ""}/${m.metadata.name} ${m.spec?.url} ${m.status?.vsmUuid ?? ""}`,
      )
      .join("\n");
    if (fingerprint !== this.#fingerprint) {
      this.#fingerprint = fingerprint;
      this.#identities = realManagers(managers);
    }
    return this.#identities.get(`${ref.namespace}/${ref.name}`);
  }
}
