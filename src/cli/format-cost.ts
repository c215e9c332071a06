/** Rendering of a plan's price (docs/cost-model.md §8) in the text output of `plan` and `evaluate`. */
import type { Scenario } from '../model/scenario';
import type { TrainingCost } from '../model/training-cost';
import { idleGpusReleased } from '../model/prices';

/** `$1,234`, `$12.35`, `$0.0123`: dollars with the digits that matter. */
export function usd(x: number): string {
  if (x >= 1e6) return `$${(x / 1e6).toLocaleString('en-US', { maximumFractionDigits: 2 })}M`;
  if (x >= 100) return `$${Math.round(x).toLocaleString('en-US')}`;
  if (x >= 1) return `$${x.toFixed(2)}`;
  return `$${x.toPrecision(3)}`;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** Two lines: the hourly and per-iteration price, then the run's days and dollars (or how to get them). */
export function formatCost(scenario: Scenario, cost: TrainingCost): string {
  const paid = idleGpusReleased(scenario) ? 'the GPUs the plan uses (idle GPUs released)' : 'every GPU of every site (search.allowIdleGpus is false)';
  const lines = [`Cost             ${usd(cost.usdPerHour)} per hour for ${count(cost.gpusPaid)} GPUs: ${paid}; ${usd(cost.usdPerIteration)} per iteration, of which egress ${usd(cost.egressUsdPerIteration)} (${cost.egressGBPerIteration.toFixed(1)} GB over the links, both directions)`];
  if (cost.iterations === null || cost.trainingDays === null || cost.trainingUsd === null || cost.egressUsd === null) {
    lines.push('Training run     give training.totalTokens for the days and dollars of the whole run');
  } else {
    lines.push(`Training run     ${count(cost.iterations)} iterations: ${cost.trainingDays.toFixed(1)} days, ${usd(cost.trainingUsd)} (egress ${usd(cost.egressUsd)})`);
  }
  return lines.join('\n');
}
