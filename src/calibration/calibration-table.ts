/**
 * Compares the cost model with published measurements (fixtures/calibration/*.json, from
 * ../shared/data/calibration.md): one calibrated model, every row, error per row.
 */
import { evaluate } from '../model/evaluate';
import { parseScenario } from '../model/scenario';
import { modelFlopsPerIteration } from '../model/transformer-flops';

/** A published measurement with the scenario and plan that produced it. */
export interface CalibrationRow {
  readonly id: string;
  /** The published table the row comes from (calibration.md section, F1/F2 for F's two tables): the unit left out together in leave-one-source-out. */
  readonly table: string;
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
  /** Predicted model FLOPs (causal) over the dense bf16 peak of the GPUs used. */
  readonly mfu: number;
  /** Predicted tokens/s per GPU, and the published figure expressed in tokens/s per GPU (every metric is proportional to it for a fixed job). */
  readonly predictedTokensPerGpu: number;
  readonly publishedTokensPerGpu: number;
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
  const publishedTokensPerGpu = row.metric === 'iterationTimeS' ? tokensPerSecondPerGpu * predicted / row.published : tokensPerSecondPerGpu * row.published / predicted;
  return {
    id: row.id, metric: row.metric, published: row.published, predicted, relativeError: (predicted - row.published) / row.published, fits: result.fits,
    mfu: result.predicted.mfu, predictedTokensPerGpu: tokensPerSecondPerGpu, publishedTokensPerGpu,
  };
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Markdown table of the results with the median and largest absolute error; optional table and leave-one-source-out columns. */
export function formatCalibrationTable(results: readonly CalibrationResult[], extra?: { table: ReadonlyMap<string, string>; loso: ReadonlyMap<string, number> }): string {
  const unit = (metric: CalibrationRow['metric']) => ({
    iterationTimeS: 's/iter', modelTflopsPerGpu: 'model TFLOP/s/GPU', recomputeTflopsPerGpu: 'TFLOP/s/GPU (with recompute)', tokensPerSecondPerGpu: 'tokens/s/GPU',
  })[metric];
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const lines = [
    extra ? '| row | table | metric | published | predicted | error | LOSO | MFU | fits |' : '| row | metric | published | predicted | error | fits |',
    extra ? '|---|---|---|---:|---:|---:|---:|---:|---|' : '|---|---|---:|---:|---:|---|',
    ...results.map((r) => {
      const predicted = r.predicted.toFixed(r.metric === 'iterationTimeS' ? 2 : r.metric === 'tokensPerSecondPerGpu' ? 0 : 1);
      return extra
        ? `| ${r.id} | ${extra.table.get(r.id)} | ${unit(r.metric)} | ${r.published} | ${predicted} | ${pct(r.relativeError)} | ${pct(extra.loso.get(r.id)!)} | ${pct(r.mfu)} | ${r.fits ? 'yes' : 'NO'} |`
        : `| ${r.id} | ${unit(r.metric)} | ${r.published} | ${predicted} | ${pct(r.relativeError)} | ${r.fits ? 'yes' : 'NO'} |`;
    }),
  ];
  const abs = results.map((r) => Math.abs(r.relativeError));
  lines.push('', `Rows: ${results.length}. Median absolute error: ${pct(median(abs))}. Largest: ${pct(Math.max(...abs))}.`);
  return lines.join('\n');
}
