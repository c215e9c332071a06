/**
 * A baseline's MIP phase gives up once its queue cannot be worked through in the time it has
 * (src/solve/search/mip-outlook.ts); the main search never does.
 */
import { mipOutlookTooLong, OUTLOOK_PROBE_CANDIDATES } from '../src/solve/search/mip-outlook';
import type { MipQueue } from '../src/solve/search/mip-queue';
import type { SearchState } from '../src/solve/search/state';

/** A state whose incumbent puts the threshold at 0.99 and whose candidates 0..n-1 have bounds 0.5 (under it) or 2 (over it). */
function setUp(comparedWithS: number | undefined, underThreshold: number, overThreshold: number, leftS: number) {
  const n = underThreshold + overThreshold;
  const bounds = Array.from({ length: n }, (_, i) => (i < underThreshold ? 0.5 : 2));
  const state = {
    bounds, requiredS: Infinity, deadlineMs: Date.now() + leftS * 1000,
    options: { gap: 0.01, comparedWithS },
    incumbent: { evaluation: { predicted: { iterationTimeS: 1 } } },
  } as unknown as SearchState;
  const queue = { order: Array.from({ length: n }, (_, i) => i), next: 0, inFlight: new Map() } as unknown as MipQueue;
  return { state, queue };
}

describe('MIP outlook of a baseline', () => {
  it('gives up when the queued MIPs at the mean pace need more than twice the time left', () => {
    // 3 MIPs in 0.3 s on one lane (0.1 s each), 40 queued under the threshold: 4 s of work, 0.5 s left.
    const { state, queue } = setUp(0.5, 40, 10, 0.5);
    expect(mipOutlookTooLong(state, queue, 3, Date.now() - 300, 1)).toBe(true);
    // Two lanes halve the projection (2 s), still past twice the time left.
    expect(mipOutlookTooLong(state, queue, 3, Date.now() - 300, 2)).toBe(true);
  });

  it('keeps going when the queue fits, counting only candidates under the threshold', () => {
    // 4 queued under the threshold (0.4 s at 0.1 s each) with 0.5 s left; the 40 over it do not count.
    const { state, queue } = setUp(0.5, 4, 40, 0.5);
    expect(mipOutlookTooLong(state, queue, 3, Date.now() - 300, 1)).toBe(false);
  });

  it('judges only after the probe, and never for the main search', () => {
    const baseline = setUp(0.5, 40, 0, 0.5);
    expect(mipOutlookTooLong(baseline.state, baseline.queue, OUTLOOK_PROBE_CANDIDATES - 1, Date.now() - 300, 1)).toBe(false);
    const main = setUp(undefined, 40, 0, 0.5);
    expect(mipOutlookTooLong(main.state, main.queue, 30, Date.now() - 3000, 1)).toBe(false);
  });
});
