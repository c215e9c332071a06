/**
 * Bandwidths and collective times for the three tiers: scale-up (NVLink), scale-out inside a
 * site (NIC, pods), and cross-site links with their network-layer settings (docs/cost-model.md §3-4).
 */
import { CALIBRATION, NETWORK } from './calibration-constants';
import type { LinkSettingsSpec } from './plan-schema';
import type { Link, Site } from './scenario';
import { gBpsToBytesPerS, gbpsToBytesPerS } from './units';

export type LinkSettings = Omit<LinkSettingsSpec, 'between'>;

/** Production defaults: RoCE, one flow per GPU pair, hierarchical collectives, no compression. */
export const DEFAULT_LINK_SETTINGS: LinkSettings = {
  transport: 'roce',
  flowsPerGpuPair: 1,
  collectives: 'hierarchical',
  gradientCompression: 'none',
};

/** A tier's collective bandwidth per GPU (bytes/s) and per ring step latency (s). */
export interface Tier {
  readonly bytesPerS: number;
  readonly stepLatencyS: number;
}

/** NVLink tier at a site. */
export const scaleUpTier = (site: Site): Tier => ({
  bytesPerS: gBpsToBytesPerS(site.gpu.scaleUpGBps) * CALIBRATION.scaleUpBusEfficiency,
  stepLatencyS: CALIBRATION.scaleUpStepLatencyS,
});

/**
 * How many times slower a pod's uplinks are than its GPUs' NICs: the oversubscription, at least 1
 * (a layer with more bytes/s than the NICs below it leaves the NICs as the limit; an input below 1
 * must not make a group that spans pods faster than one that does not, which the planner's
 * pod-free stage tables rely on).
 */
export const podSlowdown = (site: Site): number => Math.max(1, site.podOversubscription);

/** NIC tier at a site; a group spread over more than one pod shares the oversubscribed layer. */
export const scaleOutTier = (site: Site, spansPods: boolean): Tier => ({
  bytesPerS: (gbpsToBytesPerS(site.gpu.nicGbps) * CALIBRATION.scaleOutBusEfficiency) / (spansPods ? podSlowdown(site) : 1),
  stepLatencyS: CALIBRATION.scaleOutStepLatencyS,
});

/**
 * The tier a group of `groupGpus` consecutive ranks uses. Past one scale-up domain only the NICs
 * join it (through the oversubscribed layer when it spans pods). Inside one domain it takes the
 * faster of the scale-up fabric and the NICs, as NCCL's topology search does: on PCIe-class
 * scale-up under a fast NIC, GPUs of one server reach each other faster through the leaf switch
 * (one pod, so never oversubscribed). Hence a collective never gets faster as ranks are added: a
 * group inside the domain gets at least the bandwidth of any larger group, and the scale-up step
 * latency is at most the NIC's (a precondition of the ring lower bounds, docs/formulation.md §3,
 * F14; tested in bounds-tier-ordering).
 */
export function tierForGroup(site: Site, groupGpus: number, spansPods: boolean): Tier {
  if (groupGpus > site.scaleUpDomainGpus) return scaleOutTier(site, spansPods);
  const scaleUp = scaleUpTier(site);
  const nic = scaleOutTier(site, false);
  return nic.bytesPerS > scaleUp.bytesPerS ? nic : scaleUp;
}

/**
 * The tier of a data-parallel ring: `ranks` ranks, each one GPU of a model-parallel group of
 * `gpusPerRank` GPUs (tp; the ring's neighbours inside a scale-up domain are that far apart).
 * Inside one domain it is {@link tierForGroup}'s. Past it, the domain holds r = domain /
 * gpusPerRank of the ring's ranks, each with its own NIC, and NCCL runs one channel per NIC
 * (rail): every channel crosses the network once per domain and carries 1/r of the bytes, so the
 * ring moves r NICs' worth, capped by the in-domain hops it also makes (docs/cost-model.md §3).
 * Never faster than the same ring inside a domain: a collective still never gets faster as ranks
 * are added (the ring bounds' precondition, docs/formulation.md §3, F14).
 *
 * Spread over pods (`spansPods`), a ring's crossings of a pod's oversubscribed uplinks are capped
 * by {@link podRingCapBytesPerS}: slowed only when podGpus < oversubscription x max(domain,
 * gpusPerRank) (docs/cost-model.md §3).
 */
export function dataParallelTier(site: Site, ranks: number, gpusPerRank: number, spansPods: boolean): Tier {
  const groupGpus = ranks * gpusPerRank;
  if (groupGpus <= site.scaleUpDomainGpus) return tierForGroup(site, groupGpus, spansPods);
  const nic = scaleOutTier(site, false);
  const rails = Math.max(1, Math.floor(site.scaleUpDomainGpus / gpusPerRank));
  let bytesPerS = rails > 1 ? Math.min(tierForGroup(site, site.scaleUpDomainGpus, false).bytesPerS, rails * nic.bytesPerS) : nic.bytesPerS;
  if (spansPods) bytesPerS = Math.min(bytesPerS, podRingCapBytesPerS(site, gpusPerRank));
  return { bytesPerS, stepLatencyS: nic.stepLatencyS };
}

/**
 * What a pod's oversubscribed uplinks leave a ring spread over pods whose ranks are `spacing` GPUs
 * apart. The ring enters and leaves each pod once, so the uplinks carry one stream each way per
 * ring crossing them, not every GPU's traffic. It holds g = podGpus / spacing of its ranks in a pod
 * it fills, so at most podGpus / g rings cross that pod's uplinks at once, and their podGpus x NIC
 * / oversubscription bytes/s leave each g NICs over the oversubscription. With pods smaller than a
 * scale-up domain, the ring's r = domain / spacing rail channels leave a domain through NICs of
 * several pods: max(g, r) NICs. ({@link dataParallelTier}; context parallelism's ring, stage-cost.ts.)
 */
export function podRingCapBytesPerS(site: Site, spacing: number): number {
  const ranksPerPod = Math.max(1, Math.floor(site.podGpus / spacing), Math.floor(site.scaleUpDomainGpus / spacing));
  return (ranksPerPod * scaleOutTier(site, false).bytesPerS) / podSlowdown(site);
}

/**
 * The tier of context parallelism's ring: cp ranks tp apart ({@link tierForGroup}'s tier of its
 * tp x cp GPUs, no rails: each step moves a whole block over one hop), spread over pods capped as a
 * gradient ring is ({@link podRingCapBytesPerS}).
 */
export function contextParallelTier(site: Site, sitesUsedGpus: number, tp: number, cp: number): Tier {
  const tier = tierForGroup(site, tp * cp, false);
  return groupSpansPods(site, sitesUsedGpus, tp * cp) ? { ...tier, bytesPerS: Math.min(tier.bytesPerS, podRingCapBytesPerS(site, tp)) } : tier;
}

/**
 * Whether a tensor-, context- or expert-parallel group of `groupGpus` consecutive GPUs (Megatron's
 * rank order keeps them contiguous) at a site using `sitesUsedGpus` is spread over oversubscribed
 * pods: the site spills out of one pod, the pods are oversubscribed, and the group is larger than
 * a pod and than a scale-up domain (inside a domain its traffic never reaches a NIC). A group no
 * larger than a pod is taken inside one: exact when the pod's size is a multiple of the group's
 * (power-of-two groups in pods of 1,024 or 3,072 GPUs); otherwise the few groups that straddle a
 * pod boundary are not charged for the uplinks they share (docs/cost-model.md §3).
 */
export const groupSpansPods = (site: Site, sitesUsedGpus: number, groupGpus: number): boolean =>
  site.podOversubscription > 1 && sitesUsedGpus > site.podGpus && groupGpus > Math.max(site.podGpus, site.scaleUpDomainGpus);

/** Ring all-reduce of `bytes` per GPU over `ranks` GPUs: 2(n-1)/n of the bytes plus 2(n-1) step latencies. */
export function allReduceS(bytes: number, ranks: number, tier: Tier): number {
  if (ranks <= 1) return 0;
  return (2 * (ranks - 1) / ranks) * (bytes / tier.bytesPerS) + 2 * (ranks - 1) * tier.stepLatencyS;
}

/** Ring reduce-scatter or all-gather: half an all-reduce. */
export const reduceScatterS = (bytes: number, ranks: number, tier: Tier): number => allReduceS(bytes, ranks, tier) / 2;

/** All-to-all of `bytes` per GPU over `ranks` GPUs: (n-1)/n of it leaves the GPU. */
export function allToAllS(bytes: number, ranks: number, tier: Tier): number {
  if (ranks <= 1) return 0;
  return ((ranks - 1) / ranks) * (bytes / tier.bytesPerS) + (ranks - 1) * tier.stepLatencyS;
}

/**
 * Usable bytes/s of one direction of a cross-site link when `gpuPairs` GPU pairs send across it
 * at once with the given settings: capacity, capped by what the flows can carry given RTT and loss.
 */
export function linkBytesPerS(link: Link, settings: LinkSettings, gpuPairs: number): number {
  const capacity = link.bandwidthBytesPerS * CALIBRATION.crossSiteLinkEfficiency;
  const flows = Math.max(1, gpuPairs) * settings.flowsPerGpuPair;
  const rttS = Math.max(link.rttS, 1e-6);
  if (settings.transport === 'tcp') {
    const windowCap = NETWORK.tcpWindowBytes / rttS;
    const lossCap = link.lossRate > 0 ? (NETWORK.tcpMssBytes / rttS) * (1.22 / Math.sqrt(link.lossRate)) : Infinity;
    return Math.min(capacity, flows * Math.min(windowCap, lossCap));
  }
  // RoCE: go-back-N resends a whole in-flight window per loss; the window is each QP's share of the BDP.
  const windowPackets = (capacity / flows) * rttS / NETWORK.roceMtuBytes;
  return capacity / (1 + link.lossRate * Math.max(1, windowPackets));
}

/** Settings for a link, from a plan's `network` list or the defaults. */
export function settingsForLink(link: Link, siteNames: readonly string[], network: readonly LinkSettingsSpec[] | undefined): LinkSettings {
  const a = siteNames[link.siteA];
  const b = siteNames[link.siteB];
  const found = network?.find((s) => (s.between[0] === a && s.between[1] === b) || (s.between[0] === b && s.between[1] === a));
  return found ?? DEFAULT_LINK_SETTINGS;
}
