/** MIP backends that fail on purpose, for fault-injection tests. */
import type { Mip } from '../../src/formulation/mip';
import type { MipBackend, MipSolution } from '../../src/solve/mip-backend';

/** Throws as if the solver had aborted. */
export class ThrowingBackend implements MipBackend {
  readonly name = 'throwing';
  calls = 0;
  async solve(): Promise<MipSolution> { this.calls++; throw new Error('Aborted(injected fault)'); }
  async close(): Promise<void> {}
}

/** Never answers. */
export class HangingBackend implements MipBackend {
  readonly name = 'hanging';
  calls = 0;
  solve(): Promise<MipSolution> { this.calls++; return new Promise<MipSolution>(() => undefined); }
  async close(): Promise<void> {}
}

/** Answers with values that satisfy nothing and claims they are optimal. */
export class GarbageBackend implements MipBackend {
  readonly name = 'garbage';
  calls = 0;
  async solve(mip: Mip): Promise<MipSolution> {
    this.calls++;
    return { status: 'optimal', values: mip.columns.map((_, i) => (i * 7919) % 13 - 3.5), objective: -1, dualBound: 1e9, boundProven: true };
  }
  async close(): Promise<void> {}
}
