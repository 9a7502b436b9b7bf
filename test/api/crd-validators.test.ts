/**
 * src/api/crd-validators.generated.ts is written from crds/ by scripts/crd-validators.ts: the
 * committed file must equal what the script renders now (so a changed CRD, or another ajv,
 * cannot leave it stale), and the validator built from it must decide every case as the one
 * compiled from crds/ at run time: the same issues, the same defaults.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderValidators, VALIDATORS_PATH } from "../../scripts/crd-validators.ts";
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
