/**
 * The placement MIP's exposure forms (docs/formulation.md F11) are the cost model's exposed
 * gradient sync (exposedSyncS, docs/cost-model.md §3) written as linear rows: the largest of
 * 0 and every form's share x sync - window must be the exposure itself, for each ZeRO stage,
 * with and without overlap, on random syncs and windows.
 */
import type { ConfigCoefficients } from '../src/formulation/coefficients';
import { exposureForms } from '../src/formulation/placement-mip-exposure';
import { CALIBRATION } from '../src/model/calibration-constants';
import { exposedSyncS } from '../src/model/pipeline';
import { generator as seededRandom } from '../bench/realistic-scenarios';


describe('exposure forms of the placement MIP', () => {
  test('the overlap residual is a share strictly between 0 and 1', () => {
    expect(CALIBRATION.dpOverlapResidual).toBeGreaterThan(0);
    expect(CALIBRATION.dpOverlapResidual).toBeLessThan(1);
  });

  for (const zero of [0, 1, 2, 3] as const) {
    for (const overlap of [false, true]) {
      test(`equal exposedSyncS: ZeRO ${zero}, overlap ${overlap}`, () => {
        const random = seededRandom(17 + zero * 2 + (overlap ? 1 : 0));
        const c = { config: { zero }, overlapDp: overlap } as unknown as ConfigCoefficients;
        for (let i = 0; i < 2000; i++) {
          const syncS = random() * 2;
          const backwardWindowS = random() < 0.1 ? 0 : random() * 1.5;
          const forwardWindowS = random() < 0.1 ? 0 : random() * 0.8;
          const forms = exposureForms(c, backwardWindowS, forwardWindowS);
          const fromForms = Math.max(0, ...forms.map((f) => f.share * syncS - f.window));
          expect(fromForms).toBeCloseTo(exposedSyncS({ zero }, overlap, syncS, backwardWindowS, forwardWindowS), 12);
        }
      });
    }
  }

  test('a sync far shorter than its windows still leaves the residual share exposed', () => {
    const exposed = exposedSyncS({ zero: 1 }, true, 0.1, 10, 10);
    expect(exposed).toBeCloseTo(0.1 * CALIBRATION.dpOverlapResidual, 12);
    expect(exposedSyncS({ zero: 0 }, true, 0.1, 10, 10)).toBeCloseTo(0.1 * CALIBRATION.dpOverlapResidual, 12);
    expect(exposedSyncS({ zero: 1 }, false, 0.1, 10, 10)).toBe(0.1);
  });
});
