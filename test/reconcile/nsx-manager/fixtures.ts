/** Builders for the NSXManager tests: the object and its credentials Secret. */
import { API_VERSION, type NSXManager, type NSXManagerSpec, type Secret } from "../../../src/api/types.ts";
import { meta, type Meta } from "../fixtures.ts";

export function manager(spec: Partial<NSXManagerSpec> = {}, m: Meta = {}): NSXManager {
  return {
    apiVersion: API_VERSION,
    kind: "NSXManager",
    metadata: meta({ name: "nsx", ...m }),
    spec: { url: "https://nsx.example", credentialsSecretRef: { name: "nsx-creds" }, ...spec },
  };
}

export function credentials(
  name = "nsx-creds",
  data: Record<string, string> = { username: "admin", password: "s3cret" },
): Secret {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "ns" }, stringData: data };
}
