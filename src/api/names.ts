/**
 * Kubernetes object names, one definition each, as the API server checks them (RFC 1123): a
 * label (a namespace, a name `import` writes) and a subdomain (an object's name, a Lease, a
 * Secret). The CRDs bound every name they refer to at DNS_SUBDOMAIN_MAX_LENGTH
 * (test/api/crd-types.test.ts checks that).
 */
import { boundedPattern } from "../util/bounded-pattern.ts";

export const DNS_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
export const DNS_LABEL_MAX_LENGTH = 63;
export const DNS_SUBDOMAIN_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

/** lowercase letters, digits and `-`, starting and ending with a letter or digit, at most 63 */
export const isDnsLabel = boundedPattern(DNS_LABEL_PATTERN, DNS_LABEL_MAX_LENGTH);

/** DNS labels joined by `.`, at most 253 characters in all */
export const isDnsSubdomain = boundedPattern(DNS_SUBDOMAIN_PATTERN, DNS_SUBDOMAIN_MAX_LENGTH);
