/**
 * The order a run's test files start in, on one pool of workers for every project: files that
 * failed last time first, then the longest by the last run's durations (vitest's cache; a file
 * never timed counts as long), across projects (vitest's own order runs project after project,
 * so a long file of the last project would start last and end the run alone). While the control
 * plane's binaries are missing, the files that wait for them (test/controlplane/setup.ts) go
 * last, so the unit files run during the build instead of workers waiting for it (build.sh
 * --missing says what it would build).
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { notCurrent } from "../controlplane/binaries.ts";

const waitsForBinaries = (spec: TestSpecification): boolean =>
  spec.project.config.setupFiles.some((file) => file.endsWith("/test/controlplane/setup.ts"));

export class LongestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const building = notCurrent().length > 0;
    const last = new Map(files.map((spec) => [spec, this.ctx.cache.getTestSpecificationResult(spec)]));
    const rank = (spec: TestSpecification): [number, number, number] => {
      const result = last.get(spec);
      return [
        building && waitsForBinaries(spec) ? 1 : 0,
        result?.failed === true ? 0 : 1,
        -(result?.duration ?? Number.POSITIVE_INFINITY),
      ];
    };
    return Promise.resolve(
      [...files].sort((a, b) => {
        const [ra, rb] = [rank(a), rank(b)];
        return ra[0] - rb[0] || ra[1] - rb[1] || ra[2] - rb[2] || 0;
      }),
    );
  }
}
