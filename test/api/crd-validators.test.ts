/**
 * src/api/crd-validators.generated.ts is written from crds/ by scripts/crd-validators.ts: the
 * committed file must equal what the script renders now (so a changed CRD, or another ajv,
 * cannot leave it stale), and the validator built from it must decide every case as the one
 * compiled from crds/ at run time: the same issues, the same defaults.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderValidators, VALIDATORS_PATH } from "../../scripts/crd-validators.ts";
import { ucs2length } from "../../src/api/crd-formats.ts";
import { compileValidator, readCrds } from "../../src/api/crds.ts";
import { ResourceValidator } from "../../src/api/schema.ts";
import { KINDS } from "../../src/api/types.ts";
import { objectFor, VALIDATION_CASES } from "./validation-cases.ts";

const crds = readCrds();
const generated = ResourceValidator.load();
const compiled = compileValidator(crds);

describe("the generated validators", () => {
  it("are what scripts/crd-validators.ts writes from crds/ now (run it after changing a CRD or ajv)", () => {
    expect(readFileSync(VALIDATORS_PATH, "utf8")).toBe(renderValidators(crds));
  });

  it.each(VALIDATION_CASES)("decide $name as the compiled ones do ($reason)", (c) => {
    const object = objectFor(c);
    expect(generated.validate(c.kind, object)).toEqual(compiled.validate(c.kind, object));
  });

  it.each([...KINDS])("%s: the same defaults and issues for an object with every problem at once", (kind) => {
    const object = {
      apiVersion: "nsxv.io/v1alpha1",
      kind,
      metadata: { name: "x" },
      spec: {
        managerRef: { name: "" },
        extra: 1,
        edgeId: 7,
        allowed: [1, 1],
        url: "ftp://x",
        maxPerSync: -1,
      },
      status: { conditions: [{ type: "Ready" }, { type: "Ready" }], observedGeneration: 1.5 },
    };
    const fromGenerated = generated.validate(kind, object);
    expect(fromGenerated.issues.length).toBeGreaterThan(1);
    expect(fromGenerated).toEqual(compiled.validate(kind, object));
  });
});

describe("ucs2length, the generated validators' count of characters", () => {
  // ajv's own, which the validators compiled at run time call
  const ajvCount = (
    createRequire(import.meta.url)("ajv/dist/runtime/ucs2length") as { default: (s: string) => number }
  ).default;
  const unit = fc.constantFrom(
    "a",
    "é",
    "\u00ff",
    "\uD800",
    "\uDBFF",
    "\uDC00",
    "\uDFFF",
    "\uFFFF",
    "😀",
    "\u0000",
  );

  it("counts as ajv's does: a surrogate pair once, a lone or reversed surrogate once", () => {
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 24 }), (units) => {
        const text = units.join("");
        expect(ucs2length(text), JSON.stringify(text)).toBe(ajvCount(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("decides maxLength at the bound as the compiled validators do", () => {
    const object = (tenant: string) => ({
      apiVersion: "nsxv.io/v1alpha1",
      kind: "EdgeTenant",
      metadata: { name: "e", namespace: "default" },
      spec: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant },
    });
    for (const tenant of ["😀".repeat(256), "😀".repeat(257), "\uD800".repeat(256), "\uD800".repeat(257)]) {
      const fromGenerated = generated.validate("EdgeTenant", object(tenant));
      expect(fromGenerated).toEqual(compiled.validate("EdgeTenant", object(tenant)));
    }
    expect(generated.validate("EdgeTenant", object("😀".repeat(257))).issues).toHaveLength(1);
  });
});
