/** Frozen copy of balancedLayers and buildStages from src/model/placement.ts before the perf work (reference for equivalence tests and bench/enumeration-speed.ts). */
import type { StageLayout } from '../../src/model/placement';
import type { PlanSpec } from '../../src/model/plan-schema';
import type { Scenario } from '../../src/model/scenario';
import { isMoeLayer } from '../../src/model/transformer';
export type { StageLayout };

/** Splits layers over stages as evenly as possible; the extra layers go to the middle stages (the ends hold embedding and logits). */
export function balancedLayers(layers: number, stages: number): number[] {
  const base = Math.floor(layers / stages);
  const extra = layers - base * stages;
  const out = Array.from({ length: stages }, () => base);
  const order = Array.from({ length: stages }, (_, i) => i).sort(
    (a, b) => Math.abs(a - (stages - 1) / 2) - Math.abs(b - (stages - 1) / 2) || a - b,
  );
  for (let i = 0; i < extra; i++) out[order[i]!]! += 1;
  return out;
}

export function buildStages(scenario: Scenario, plan: PlanSpec, layersPerStage: readonly number[]): StageLayout[] {
  const v = plan.virtualStages;
  const chunkLayers = layersPerStage.map((layers) => balancedLayers(layers, v));
  // Virtual stage q = chunk * pp + stage runs the q-th contiguous block of layers.
  const firstLayer: number[][] = layersPerStage.map(() => []);
  let next = 0;
  for (let chunk = 0; chunk < v; chunk++) {
    for (let stage = 0; stage < plan.pp; stage++) {
      firstLayer[stage]![chunk] = next;
      next += chunkLayers[stage]![chunk]!;
    }
  }
  return layersPerStage.map((layers, stage) => {
    let moeLayers = 0;
    for (let chunk = 0; chunk < v; chunk++) {
      for (let k = 0; k < chunkLayers[stage]![chunk]!; k++) {
        if (isMoeLayer(scenario.model, firstLayer[stage]![chunk]! + k)) moeLayers++;
      }
    }
    return {
      index: stage,
      layers,
      moeLayers,
      chunkLayers: chunkLayers[stage]!,
      hasEmbedding: stage === 0,
      hasOutputLayer: stage === plan.pp - 1,
    };
  });
}
