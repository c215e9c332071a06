/**
 * The price of a plan (docs/cost-model.md §8): the GPUs it holds per hour, the egress of one
 * iteration, and the days and dollars of the whole run. Pure arithmetic, units in the names:
 * Usd (US dollars), GB (1e9 bytes), S (seconds).
 */

const SECONDS_PER_HOUR = 3600;
const SECONDS_PER_DAY = 86400;
const BYTES_PER_GB = 1e9;

/** What `plan --json` and `evaluate --json` print as `cost`. */
export interface TrainingCost {
  /** The GPUs the plan holds, at their sites' prices, per hour of training (egress is billed per GB on top). */
  readonly usdPerHour: number;
  /** One iteration: the GPUs for its duration plus its egress. */
  readonly usdPerIteration: number;
  /** Egress of one iteration: the bytes each link carries in each direction at that link's price. */
  readonly egressUsdPerIteration: number;
  /** Iterations to process training.totalTokens (null without it). */
  readonly iterations: number | null;
  /** iterations x iteration time, in days (null without training.totalTokens). */
  readonly trainingDays: number | null;
  /** GPU-hours of the GPUs the plan holds x their prices, plus the run's egress (null without training.totalTokens). */
  readonly trainingUsd: number | null;
  /** Egress of the whole run (null without training.totalTokens). */
  readonly egressUsd: number | null;
  /** GPUs paid for (docs/cost-model.md §8: the used ones when idle GPUs are released, else every GPU). */
  readonly gpusPaid: number;
  /** GB sent over all links in one iteration, both directions added. */
  readonly egressGBPerIteration: number;
}

/** Hourly price of holding `gpusPerSite[s]` GPUs at each site s at `gpuHourUsd[s]` each. */
export function gpuUsdPerHour(gpusPerSite: readonly number[], gpuHourUsd: readonly number[]): number {
  return gpusPerSite.reduce((sum, gpus, s) => sum + gpus * gpuHourUsd[s]!, 0);
}

/** Dollars of sending `aToBBytes` and `bToABytes` over each link priced at `egressUsdPerGB` per direction. */
export function egressUsdPerIteration(bytes: readonly { readonly aToBBytes: number; readonly bToABytes: number }[], egressUsdPerGB: readonly number[]): number {
  return bytes.reduce((sum, link, i) => sum + ((link.aToBBytes + link.bToABytes) / BYTES_PER_GB) * egressUsdPerGB[i]!, 0);
}

/** Whole iterations to process `totalTokens`: totalTokens / (globalBatchSeqs x seqLen), rounded up. */
export function iterationsForTokens(totalTokens: number, globalBatchSeqs: number, seqLen: number): number {
  return Math.ceil(totalTokens / (globalBatchSeqs * seqLen) - 1e-9);
}

/** Dollars of one iteration of `iterationTimeS` holding GPUs at `usdPerHour`, with its egress. */
export function usdPerIteration(usdPerHour: number, iterationTimeS: number, egressUsd: number): number {
  return (usdPerHour * iterationTimeS) / SECONDS_PER_HOUR + egressUsd;
}

/** The price of a plan from its hourly GPU price, iteration time, egress per iteration and (optionally) the run's iterations. */
export function trainingCost(input: {
  readonly usdPerHour: number;
  readonly iterationTimeS: number;
  readonly egressUsdPerIteration: number;
  readonly egressBytesPerIteration: number;
  readonly gpusPaid: number;
  readonly iterations?: number;
}): TrainingCost {
  const perIteration = usdPerIteration(input.usdPerHour, input.iterationTimeS, input.egressUsdPerIteration);
  const n = input.iterations;
  return {
    usdPerHour: input.usdPerHour,
    usdPerIteration: perIteration,
    egressUsdPerIteration: input.egressUsdPerIteration,
    iterations: n ?? null,
    trainingDays: n === undefined ? null : (n * input.iterationTimeS) / SECONDS_PER_DAY,
    trainingUsd: n === undefined ? null : n * perIteration,
    egressUsd: n === undefined ? null : n * input.egressUsdPerIteration,
    gpusPaid: input.gpusPaid,
    egressGBPerIteration: input.egressBytesPerIteration / BYTES_PER_GB,
  };
}

/**
 * The least hourly price of any `gpus` GPUs of the cluster: the cheapest sites filled first
 * (sites as { gpus, gpuHourUsd }). Infinity when the cluster has fewer GPUs.
 */
export function cheapestGpusUsdPerHour(sites: readonly { readonly gpus: number; readonly gpuHourUsd: number }[], gpus: number): number {
  return filledUsdPerHour([...sites].sort((a, b) => a.gpuHourUsd - b.gpuHourUsd), gpus);
}

/** The most hourly price any `gpus` GPUs of the cluster can have: the dearest sites filled first. */
export function dearestGpusUsdPerHour(sites: readonly { readonly gpus: number; readonly gpuHourUsd: number }[], gpus: number): number {
  return filledUsdPerHour([...sites].sort((a, b) => b.gpuHourUsd - a.gpuHourUsd), gpus);
}

function filledUsdPerHour(ordered: readonly { readonly gpus: number; readonly gpuHourUsd: number }[], gpus: number): number {
  let left = gpus;
  let usd = 0;
  for (const site of ordered) {
    const take = Math.min(left, site.gpus);
    usd += take * site.gpuHourUsd;
    left -= take;
    if (left <= 0) return usd;
  }
  return left > 0 ? Infinity : usd;
}
