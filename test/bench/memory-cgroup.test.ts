/**
 * bench/lib/memory-cgroup.ts: the Deployment's limit read from deploy/, Kubernetes quantities, and
 * a cgroup whose limit a child Node really sees (process.constrainedMemory()). Where this machine
 * cannot make a cgroup, the reason is asserted instead: the scale benchmarks then skip the case
 * with that reason in their notes.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  createMemoryCgroup,
  deploymentMemoryLimitBytes,
  quantityBytes,
} from "../../bench/lib/memory-cgroup.ts";

describe("quantityBytes", () => {
  it.each([
    { quantity: "512Mi", bytes: 512 * 2 ** 20, reason: "binary suffix, as deploy/ writes it" },
    { quantity: "1Gi", bytes: 2 ** 30, reason: "gibibytes" },
    { quantity: "64Ki", bytes: 64 * 1024, reason: "kibibytes" },
    { quantity: "300M", bytes: 300e6, reason: "decimal suffix" },
    { quantity: "268435456", bytes: 268435456, reason: "plain bytes" },
  ])("$quantity is $bytes bytes ($reason)", ({ quantity, bytes }) => {
    expect(quantityBytes(quantity)).toBe(bytes);
  });

  it.each(["512MB", "0.5Gi", "", "Mi"])("refuses %j, naming it", (quantity) => {
    expect(() => quantityBytes(quantity)).toThrow(JSON.stringify(quantity));
  });
});

describe("deploymentMemoryLimitBytes", () => {
  it("is the operator container's limits.memory in deploy/core/deployment.yaml", () => {
    const file = new URL("../../deploy/core/deployment.yaml", import.meta.url);
    const deployment = parse(readFileSync(file, "utf8")) as {
      spec: { template: { spec: { containers: { resources: { limits: { memory: string } } }[] } } };
    };
    const declared = deployment.spec.template.spec.containers[0]?.resources.limits.memory ?? "";
    expect(deploymentMemoryLimitBytes()).toBe(quantityBytes(declared));
    expect(deploymentMemoryLimitBytes()).toBeGreaterThan(0);
  });
});

describe("createMemoryCgroup", () => {
  it("runs a child under the limit, or says why it cannot", async () => {
    const limitBytes = 300 * 2 ** 20;
    const made = await createMemoryCgroup(limitBytes);
    if ("unavailable" in made) {
      expect(made.unavailable).toMatch(/cgroup|memory limit/);
      return;
    }
    const { cgroup } = made;
    try {
      const { stdout } = await promisify(execFile)(cgroup.execPath, [
        "-e",
        "console.log(process.constrainedMemory())",
      ]);
      expect(Number(stdout.trim())).toBe(limitBytes);
    } finally {
      await cgroup.remove();
    }
    expect(existsSync(cgroup.execPath)).toBe(false);
  });
});
