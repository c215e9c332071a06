/**
 * HiGHS on the calling thread: the explorer's planner already runs in a Web Worker, so each MIP is
 * solved there with the same solveMipWithHighs the CLI's worker threads run. Cancelling is
 * terminating the Web Worker.
 */
import type { Mip } from '../../src/formulation/mip';
import { solveMipWithHighs, toHighsArrays } from '../../src/solve/highs-solve';
import type { MipBackend, MipSolution, MipSolveOptions } from '../../src/solve/mip-backend';

export class HighsThreadBackend implements MipBackend {
  readonly name = 'highs';

  /** `highs`: a loaded HiGHS instance (the `highs` package's loader resolved). */
  constructor(private readonly highs: unknown) {}

  async solve(mip: Mip, options: MipSolveOptions): Promise<MipSolution> {
    const request = {
      model: toHighsArrays(mip), timeLimitS: options.timeLimitS, relativeGap: options.relativeGap,
      stopWhenBoundAtLeast: options.stopWhenBoundAtLeast, randomSeed: options.randomSeed, objectiveCutoff: options.objectiveCutoff,
      objectiveTarget: options.objectiveTarget,
    };
    const progress = options.onProgress;
    const abort = options.abort;
    return solveMipWithHighs(this.highs, request,
      progress ? (incumbent, bound) => progress({ incumbent, bound }) : undefined,
      abort ? () => abort.aborted : undefined);
  }

  async close(): Promise<void> {}
}
