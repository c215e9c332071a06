/**
 * The CLI's choice of V8's WebAssembly tiers (src/cli/wasm-tiering.ts): Liftoff only for commands
 * that plan one scenario on at most 2 cores; the measured reason is in docs/benchmarks.md.
 */
import { liftoffOnly } from '../src/cli/wasm-tiering';

describe('WebAssembly tiering of a CLI process', () => {
  it.each(['plan', 'diagnose', 'report'])('`%s` on 2 cores or fewer runs Liftoff only', (command) => {
    expect(liftoffOnly([command, 'scenario.json'], 2, {})).toBe(true);
    expect(liftoffOnly([command, 'scenario.json'], 1, {})).toBe(true);
  });

  it('keeps the optimising tier with more cores, for batch, for commands without HiGHS, and when asked to', () => {
    expect(liftoffOnly(['plan', 'scenario.json'], 3, {})).toBe(false);
    expect(liftoffOnly(['batch', 'dir', '--out', 'r.ndjson'], 2, {})).toBe(false);
    expect(liftoffOnly(['evaluate', 's.json', '--plan', 'p.json'], 2, {})).toBe(false);
    expect(liftoffOnly([], 2, {})).toBe(false);
    expect(liftoffOnly(['plan', 'scenario.json'], 2, { SCALEACROSS_WASM_TIER_UP: '1' })).toBe(false);
  });
});
