/**
 * The robustness misses' gap split (bench/robustness-misses.ts): the three shares add up to the
 * short run's gap, and the class is the largest share.
 */
import fc from 'fast-check';
import { classify } from '../bench/robustness-misses';

describe('gap split of a miss', () => {
  it('its shares add up to the short run\'s gap, none negative, and the class is the largest', () => {
    fc.assert(fc.property(fc.double({ min: 0.1, max: 10, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.5, max: 1.5, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }),
      (shortS, shortBoundShare, longRatio, longBoundShare) => {
        const short = { timeS: shortS, boundS: shortS * shortBoundShare };
        // Both bounds are valid, so neither plan beats either bound.
        const longS = Math.max(shortS * longRatio, short.boundS);
        const long = { timeS: longS, boundS: Math.min(shortS, longS) * longBoundShare };
        const split = classify(short, long);
        for (const share of [split.search, split.slow, split.weak]) expect(share).toBeGreaterThanOrEqual(0);
        expect(split.search + split.slow + split.weak).toBeCloseTo((short.timeS - short.boundS) / short.timeS, 9);
        const largest = Math.max(split.search, split.slow, split.weak);
        expect({ search: split.search, 'bound, slow': split.slow, 'bound, weak': split.weak }[split.kind]).toBe(largest);
      }));
  });

  it('names the side that closed the gap', () => {
    expect(classify({ timeS: 2, boundS: 1 }, { timeS: 1.01, boundS: 1 }).kind).toBe('search');
    expect(classify({ timeS: 2, boundS: 1 }, { timeS: 2, boundS: 1.99 }).kind).toBe('bound, slow');
    expect(classify({ timeS: 2, boundS: 1 }, { timeS: 2, boundS: 1.01 }).kind).toBe('bound, weak');
  });
});
