/**
 * The exhaustive placement walk's suffix table (leastBoundTable) answers, for every position and
 * microbatch count, what the scan it replaced answered: the least bound among the choices from
 * that position on that run at least that many microbatches (Infinity when none does).
 */
import { leastBoundTable } from '../src/solve/exhaustive-placements';
import { generator as seededRandom } from '../bench/realistic-scenarios';


it('equals the scan over the remaining choices on random choice lists', () => {
  const random = seededRandom(20261202);
  for (let trial = 0; trial < 200; trial++) {
    const n = Math.floor(random() * 40);
    const ordered = Array.from({ length: n }, () => ({ k: 1 + Math.floor(random() * 12), boundS: random() * 5 }))
      .sort((a, b) => a.boundS - b.boundS);
    const least = leastBoundTable(ordered);
    for (let i = 0; i <= n; i++) {
      for (let k = 0; k <= 14; k++) {
        let scan = Infinity;
        for (let p = i; p < n; p++) if (ordered[p]!.k >= k && ordered[p]!.boundS < scan) scan = ordered[p]!.boundS;
        expect(least(i, k)).toBe(scan);
      }
    }
  }
});
