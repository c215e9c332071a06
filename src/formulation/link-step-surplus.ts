/**
 * The link-step surplus (docs/formulation.md §2, eq. 2.1): what the cost model's pipeline link
 * step of a link adds, at least, to the capacity step the placement MIP and the closed-form bounds
 * charge (bytes of every crossing / capacity), in a space whose network settings are the defaults.
 *
 * A pipeline boundary crossed by C replica-crossings loads the link with C x sendBytes and
 * C x tp x cp GPU pairs (docs/cost-model.md §4, group-pipelines.ts), so its step is
 * C x sendBytes / usable(C x tp x cp). Under RoCE, usable(n) = capacity / (1 + loss x max(1, W / n'))
 * with n' = n / (tp x cp) and W the window of one crossing's flows in packets, so
 *
 *     step(C) - C x sendBytes / capacity = sendBytes x loss x max(C, W) / capacity
 *                                       >= sendBytes x loss x max(1, W) / capacity = step(1) - sendBytes / capacity,
 *
 * the go-back-N resends of every crossing's window: a surplus that does not shrink as more
 * replicas share the link (the queueing the capacity step alone leaves out). Under TCP, usable(n)
 * = min(capacity, n x per-flow cap), so at large C the step is the capacity step: no surplus. A
 * space that may choose TCP therefore gets none.
 */
import { CALIBRATION } from '../model/calibration-constants';
import { DEFAULT_LINK_SETTINGS, linkBytesPerS } from '../model/network';
import type { Scenario } from '../model/scenario';
import type { ConfigCoefficients, LayoutCoefficients } from './coefficients';
import { fillStepsOn } from './stage-floor-coefficients';

/** The surplus is shrunk by this relative margin: the bounds add it to other terms in another order than the cost model. */
const ROUNDING_MARGIN = 1e-9;

/**
 * Seconds every pipeline step of each link takes beyond its bytes over its capacity, for
 * crossings of `sendBytes` sent by `pairsPerCrossing` GPU pairs (tp x cp), under the default
 * settings (RoCE, one flow per pair); 0 for every link when the space may change the settings.
 */
export function pipelineLinkStepSurplusS(scenario: Scenario, sendBytes: number, pairsPerCrossing: number, defaultNetworkOnly: boolean): number[] {
  return scenario.links.map((link) => {
    if (!defaultNetworkOnly || DEFAULT_LINK_SETTINGS.transport !== 'roce' || link.lossRate <= 0) return 0;
    // The capacity the bounds charge (coefficients.ts: capacity x link efficiency).
    const capacityStepS = sendBytes / (link.bandwidthBytesPerS * CALIBRATION.crossSiteLinkEfficiency);
    const oneCrossingStepS = sendBytes / linkBytesPerS(link, DEFAULT_LINK_SETTINGS, pairsPerCrossing);
    return Math.max(0, (oneCrossingStepS - capacityStepS) * (1 - ROUNDING_MARGIN));
  });
}

/**
 * What a replica of `layout` waits on its links at least from the surplus alone (each link it
 * crosses carries at least its own crossing, so each of its steps is at least the link's surplus):
 * `fillS`, the link steps eq. 5.9a (1F1B, ZB-H1) or eq. 5.4 charge besides k x the slowest stage
 * (fillStepsOn, as the MIP's stage-bound rows), and `stepS`, the least step of the busiest of its
 * links, which eq. 5.9b takes k + 1 times (1F1B, ZB-H1) and eq. 5.4 k times in its steady state.
 * Both 0 without crossings or surplus.
 */
export function replicaSurplusS(c: ConfigCoefficients, layout: LayoutCoefficients): { readonly fillS: number; readonly stepS: number } {
  let fillS = 0;
  let stepS = 0;
  for (const link of layout.crossingsPerLink.keys()) {
    const surplus = c.linkStepSurplusS[link] ?? 0;
    fillS = Math.max(fillS, fillStepsOn(layout, link) * surplus);
    stepS = Math.max(stepS, surplus);
  }
  return { fillS, stepS };
}
