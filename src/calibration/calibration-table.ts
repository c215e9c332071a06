/**
 * Compares the cost model with published measurements (fixtures/calibration/*.json, from
 * ../shared/data/calibration.md): one calibrated model, every row, error per row.
 */
import { evaluate } from '../model/evaluate';
import { parseScenario } from '../model/scenario';
import { modelFlopsPerIteration } from '../model/transformer';

/** A published measurement with the scenario and plan that produced it. */
export interface CalibrationRow {
  readonly id: string;
  readonly source: string;
  /**
   * What was published: hardware TFLOP/s counting recomputation (SC'21), model TFLOP/s as
   * Megatron-LM's README counts them (full attention square), seconds per iteration, or tokens/s per GPU.
   */
  readonly metric: 'recomputeTflopsPerGpu' | 'modelTflopsPerGpu' | 'iterationTimeS' | 'tokensPerSecondPerGpu';
  readonly published: number;
  readonly assumptions: string;
  readonly scenario: unknown;
  readonly plan: unknown;
}

export interface CalibrationResult {
  readonly id: string;
  readonly metric: CalibrationRow['metric'];
  readonly published: number;
  readonly predicted: number;
  /** (predicted - published) / published. */
  readonly relativeError: number;
  readonly fits: boolean;
}

/** SC'21 eq. (3): FLOPs per iteration counting full recomputation, 96 B s l h^2 (1 + s/6h + V/16lh). */
function sc21FlopsWithRecompute(scenario: ReturnType<typeof parseScenario>): number {
  const { hidden: h, layers: l, vocab: V } = scenario.model;
  const { seqLen: s, globalBatchSeqs: B } = scenario.training;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

/** Evaluates one row's plan and expresses the prediction in the row's published metric. */
export function calibrate(row: CalibrationRow): CalibrationResult {
  const scenario = parseScenario(row.scenario, row.id);
  const result = evaluate(scenario, row.plan);
  const { iterationTimeS, gpusUsed, tokensPerSecondPerGpu } = result.predicted;
  const { model, training } = scenario;
  let predicted: number;
  switch (row.metric) {
    case 'iterationTimeS': predicted = iterationTimeS; break;
    // Megatron-LM's FLOP formula of 2024 counts the full attention square; the project's MFU counts the causal half.
    case 'modelTflopsPerGpu': predicted = modelFlopsPerIteration(model, training.seqLen, training.globalBatchSeqs, 'full') / iterationTimeS / gpusUsed / 1e12; break;
    case 'tokensPerSecondPerGpu': predicted = tokensPerSecondPerGpu; break;
    case 'recomputeTflopsPerGpu': predicted = sc21FlopsWithRecompute(scenario) / iterationTimeS / gpusUsed / 1e12; break;
  }
  return { id: row.id, metric: row.metric, published: row.published, predicted, relativeError: (predicted - row.published) / row.published, fits: result.fits };
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Markdown table of the results with the median and largest absolute error. */
export function formatCalibrationTable(results: readonly CalibrationResult[]): string {
  const unit = (metric: CalibrationRow['metric']) => ({
    iterationTimeS: 's/iter', modelTflopsPerGpu: 'model TFLOP/s/GPU', recomputeTflopsPerGpu: 'TFLOP/s/GPU (with recompute)', tokensPerSecondPerGpu: 'tokens/s/GPU',
  })[metric];
  const lines = [
    '| row | metric | published | predicted | error | fits |',
    '|---|---|---:|---:|---:|---|',
    ...results.map((r) => `| ${r.id} | ${unit(r.metric)} | ${r.published} | ${r.predicted.toFixed(r.metric === 'iterationTimeS' ? 2 : r.metric === 'tokensPerSecondPerGpu' ? 0 : 1)} | ${(100 * r.relativeError).toFixed(1)}% | ${r.fits ? 'yes' : 'NO'} |`),
  ];
  const abs = results.map((r) => Math.abs(r.relativeError));
  lines.push('', `Rows: ${results.length}. Median absolute error: ${(100 * median(abs)).toFixed(1)}%. Largest: ${(100 * Math.max(...abs)).toFixed(1)}%.`);
  return lines.join('\n');
}
