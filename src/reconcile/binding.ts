/**
 * Where, and how, a Secret's credentials may go: decided by whoever may write the Secret, never
 * by whoever may write an NSXManager (in a cluster, someone who may create NSXManagers need not be
 * allowed to read Secrets, and the operator, which reads them, must not become their way to).
 * Annotations on the credentials Secret:
 * - `nsxv.io/allowed-manager-urls`: the manager URLs the credentials may be sent to (compared as
 *   URLs). The scheme is part of the URL: an `http://` URL listed there is the owner's consent to
 *   plain HTTP to it, and the only one.
 * - `nsxv.io/allowed-ca-secrets`: the Secrets (of the same namespace) whose CA bundles may verify
 *   the manager for these credentials, besides the Secret itself; with none listed, an
 *   NSXManager's `spec.tls.caSecretRef` may name only the credentials Secret, and otherwise the
 *   system's trusted authorities verify the manager.
 * - `nsxv.io/allow-insecure-skip-verify: "true"`: the owner's consent to send the credentials to
 *   an `https://` URL without verifying the certificate (a lab manager).
 * Anything else is CredentialsNotBound, with no call. Secrets of manifest files need none of
 * this: whoever runs the CLI holds them already.
 */
import { normalizeManagerUrl } from "../api/manager-url.ts";
import {
  SECRET_ALLOWED_CA_ANNOTATION,
  SECRET_BINDING_ANNOTATION,
  SECRET_INSECURE_ANNOTATION,
  type Secret,
} from "../api/types.ts";
import { ReconcileError } from "./errors.ts";
import type { ManagerConfig } from "./spec.ts";

/** The manager URLs a Secret's binding names, normalized; unparsable entries name nothing. */
export function boundUrls(secret: Secret): string[] {
  return listed(secret, SECRET_BINDING_ANNOTATION).flatMap((entry) => normalizeManagerUrl(entry) ?? []);
}

/**
 * CredentialsNotBound unless the Secret (`namespace/name`) lets its credentials go where and as
 * `config` says: to its URL, over TLS verified as the Secret allows. The message says who decides
 * and what to check; it never offers a command that would bind the Secret to whatever the
 * NSXManager names.
 */
export function assertBound(secret: Secret, name: string, manager: string, config: ManagerConfig): void {
  const target = normalizeManagerUrl(config.url) ?? config.url;
  const refuse = (why: string, decide: string): never => {
    const message = `Secret ${name} ${why}, so the operator does not send its credentials for NSXManager ${manager}. Whoever owns the Secret decides, not whoever writes the NSXManager: ${decide}; if nobody meant this NSXManager to use these credentials, find out who set it up`;
    throw new ReconcileError({ reason: "CredentialsNotBound", message });
  };
  if (!boundUrls(secret).includes(target)) {
    refuse(
      `does not name ${target} in its annotation ${SECRET_BINDING_ANNOTATION}`,
      `check that ${target} is the real manager (its address, and on https its certificate) before adding it to that annotation`,
    );
  }
  if (!target.startsWith("https:")) return;
  if (config.insecureSkipVerify && secret.metadata.annotations?.[SECRET_INSECURE_ANNOTATION] !== "true") {
    refuse(
      `allows ${target} only over TLS with its certificate verified, and the NSXManager sets spec.tls.insecureSkipVerify`,
      `anyone on the network path can pose as a manager whose certificate is not verified; trust its CA instead (spec.tls.caSecretRef), or, for a lab manager only, annotate the Secret ${SECRET_INSECURE_ANNOTATION}: "true"`,
    );
  }
  const ca = config.ca?.secret;
  const secretName = secret.metadata.name;
  if (ca !== undefined && ca !== secretName && !listed(secret, SECRET_ALLOWED_CA_ANNOTATION).includes(ca)) {
    refuse(
      `does not allow the CA of Secret ${ca} (spec.tls.caSecretRef) to verify the manager: its annotation ${SECRET_ALLOWED_CA_ANNOTATION} does not name it`,
      `a CA that verifies the manager decides who can pose as it; check that Secret ${ca} holds the manager's CA before naming it in that annotation, or put the CA in the credentials Secret itself`,
    );
  }
}

function listed(secret: Secret, annotation: string): string[] {
  const text = secret.metadata.annotations?.[annotation] ?? "";
  return text.split(/[\s,]+/).filter((entry) => entry !== "");
}
