/**
 * Expert-parallel token dispatch and combine (docs/cost-model.md §3, EP): where a token's routed
 * copies travel (NVLink inside the scale-up domain, the NIC between domains), how many copies
 * cross the NIC with each dispatcher, and how long one all-to-all takes on the two tiers at once.
 */
import { groupSpansPods, podSlowdown, scaleOutTier, tierForGroup } from './network';
import type { Scenario, Site } from './scenario';
import type { ExpertDispatcher } from './scenario-schema';

type Model = Scenario['model'];
import { BF16_BYTES } from './units';

/** How an expert-parallel group of `ep` ranks (each `tp` GPUs wide) lies over scale-up domains. */
export interface ExpertGroupShape {
  /** Scale-up domains the group spans. */
  readonly domains: number;
  /** Expert-parallel ranks inside one domain (ep / domains). */
  readonly ranksPerDomain: number;
}

/**
 * Megatron orders ranks tp, cp, ep, dp (expert parallelism folded over data parallelism), so an
 * expert group's `ep` ranks are `tp` GPUs apart and span `ep x tp` consecutive GPUs.
 */
export function expertGroupShape(site: Site, ep: number, tp: number): ExpertGroupShape {
  const spanGpus = ep * tp;
  if (spanGpus <= site.scaleUpDomainGpus) return { domains: 1, ranksPerDomain: ep };
  const domains = Math.ceil(spanGpus / site.scaleUpDomainGpus);
  return { domains, ranksPerDomain: ep / domains };
}

/**
 * Probability that a token's top-k routed experts include at least one of the `share` experts
 * a given domain holds out of `experts` (balanced routing, k distinct experts drawn uniformly):
 * 1 - C(E - share, k) / C(E, k).
 */
export function domainTouchedProbability(experts: number, share: number, topK: number): number {
  let missAll = 1;
  for (let i = 0; i < topK; i++) missAll *= Math.max(0, experts - share - i) / (experts - i);
  return 1 - missAll;
}

/**
 * Expected remote domains one token is sent to by a node-deduplicating dispatcher (DeepEP,
 * HybridEP: one copy per destination domain over the NIC, forwarded over NVLink inside it).
 * Group-limited routing (DeepSeek-V3: each token picks its experts inside 4 of 8 expert groups,
 * so it reaches at most 4 nodes) caps it when the groups align with the domains.
 */
export function remoteDomainsPerToken(model: Model, shape: ExpertGroupShape): number {
  const moe = model.moe!;
  if (shape.domains <= 1) return 0;
  let touched = domainTouchedProbability(moe.experts, moe.experts / shape.domains, moe.topK);
  const groups = moe.routingGroups;
  if (groups !== undefined && groups.count % shape.domains === 0) {
    touched = Math.min(touched, domainTouchedProbability(groups.count, groups.count / shape.domains, groups.perToken));
  }
  return (shape.domains - 1) * touched;
}

/** Bytes one GPU sends in one dispatch (or one combine) of its tokens, per tier. */
export interface DispatchBytes {
  readonly nicBytes: number;
  readonly scaleUpBytes: number;
}

/**
 * Bytes per GPU of one dispatch or combine of `tokens` tokens (per tensor-parallel rank, bf16).
 * `alltoall` (NCCL all-to-all, Megatron's default): every routed copy travels; (ep - r)/ep of
 * them leave the domain through the NIC, (r - 1)/ep stay on NVLink (r ranks per domain).
 * `deepep` / `hybridep`: one copy per remote destination domain over the NIC, then every copy's
 * last hop inside its destination domain over NVLink.
 */
export function dispatchBytes(model: Model, shape: ExpertGroupShape, ep: number, tokens: number, dispatcher: ExpertDispatcher): DispatchBytes {
  const tokenBytes = model.hidden * BF16_BYTES;
  const copies = tokens * model.moe!.topK;
  const r = shape.ranksPerDomain;
  if (dispatcher === 'alltoall') {
    return { nicBytes: copies * tokenBytes * (ep - r) / ep, scaleUpBytes: copies * tokenBytes * (r - 1) / ep };
  }
  return {
    nicBytes: tokens * remoteDomainsPerToken(model, shape) * tokenBytes,
    scaleUpBytes: r > 1 ? copies * tokenBytes * (r - 1) / r : 0,
  };
}

/** The busiest expert-parallel rank's routed tokens over the mean (model.moe.loadImbalance; 1 when balanced). */
export const expertLoadImbalance = (model: Model): number => model.moe?.loadImbalance ?? 1;

/** Bytes of a dispatch scaled by the busiest rank's load (what it receives sets the all-to-all's time). */
export const scaleDispatchBytes = (bytes: DispatchBytes, factor: number): DispatchBytes =>
  ({ nicBytes: bytes.nicBytes * factor, scaleUpBytes: bytes.scaleUpBytes * factor });

/**
 * The share of an expert-parallel group's NIC bytes bound for other pods (0 when the group is not
 * spread over oversubscribed pods, network.ts groupSpansPods): the group is ep x expertTp
 * consecutive GPUs, so of the GPUs outside a sender's domain, those outside its pod.
 */
export function expertOutOfPodShare(site: Site, sitesUsedGpus: number, ep: number, expertTp: number): number {
  const groupGpus = ep * expertTp;
  if (!groupSpansPods(site, sitesUsedGpus, groupGpus)) return 0;
  return Math.min(1, (groupGpus - site.podGpus) / Math.max(1, groupGpus - site.scaleUpDomainGpus));
}

/**
 * Seconds of one dispatch or combine: the NIC and NVLink parts run at once (the slower sets the
 * time), plus one step latency per peer domain and per peer inside the domain. A group spread over
 * pods sends `outOfPodShare` of its NIC bytes out of each pod ({@link expertOutOfPodShare}), all
 * its GPUs at once, through uplinks of the pod's GPUs' NICs over the oversubscription: the NIC part
 * takes max(1, share x oversubscription) times as long (docs/cost-model.md §3).
 */
export function dispatchS(site: Site, shape: ExpertGroupShape, tp: number, bytes: DispatchBytes, outOfPodShare: number): number {
  const inDomain = tierForGroup(site, Math.min(shape.ranksPerDomain * tp, site.scaleUpDomainGpus), false);
  const base = scaleOutTier(site, false);
  const nic = outOfPodShare > 0 ? { ...base, bytesPerS: base.bytesPerS / Math.max(1, outOfPodShare * podSlowdown(site)) } : base;
  const transferS = Math.max(bytes.nicBytes / nic.bytesPerS, bytes.scaleUpBytes / inDomain.bytesPerS);
  const latencyS = (shape.domains - 1) * nic.stepLatencyS + Math.max(0, Math.ceil(shape.ranksPerDomain) - 1) * inDomain.stepLatencyS;
  return transferS + latencyS;
}
