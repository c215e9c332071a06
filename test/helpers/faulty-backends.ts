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

/**
 * A real backend whose answers arrive `delayMs` late unless the solve is stopped (aborted): a
 * slow lane, to check that another lane's conclusive answer stops it.
 */
export class SlowBackend implements MipBackend {
  readonly name: string;
  calls = 0;
  aborted = 0;
  constructor(private readonly inner: MipBackend, private readonly delayMs: number) { this.name = `slow ${inner.name}`; }
  async solve(mip: Mip, options: Parameters<MipBackend['solve']>[1]): Promise<MipSolution> {
    this.calls++;
    const answer = await this.inner.solve(mip, options);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.delayMs);
      options.abort?.addEventListener('abort', () => { this.aborted++; clearTimeout(timer); resolve(); });
      if (options.abort?.aborted) { this.aborted++; clearTimeout(timer); resolve(); }
    });
    return answer;
  }
  async close(): Promise<void> { await this.inner.close(); }
}
