/**
 * The GPUs of a bidirectional DualPipe pipeline (docs/cost-model.md §5-6): each holds two model
 * stages, one per direction, so every stage's weights are on two GPUs. Pure.
 */
import type { StageLayout } from './placement';
import type { Scenario } from './scenario';
import { isMoeLayer } from './transformer-params';

/**
 * DualPipe's GPUs (DeepSeek-V3 report §3.2.1): `layersPerStage` are the pp model stages; GPU j
 * holds stage j (chunk 0, direction 0) and stage pp - 1 - j (chunk 1, direction 1), so two stages'
 * layers, and GPUs 0 and pp - 1 both hold the embedding and the output layer and loss.
 */
export function buildBidirectionalStages(scenario: Scenario, pp: number, layersPerStage: readonly number[]): StageLayout[] {
  const firstLayer: number[] = [];
  layersPerStage.reduce((next, n, stage) => { firstLayer[stage] = next; return next + n; }, 0);
  const moeIn = (stage: number) => {
    let count = 0;
    for (let k = 0; k < layersPerStage[stage]!; k++) if (isMoeLayer(scenario.model, firstLayer[stage]! + k)) count++;
    return count;
  };
  return layersPerStage.map((_, stage) => {
    const held = [stage, pp - 1 - stage];
    const ends = stage === 0 || stage === pp - 1;
    return {
      index: stage,
      layers: layersPerStage[stage]! + layersPerStage[pp - 1 - stage]!,
      moeLayers: moeIn(stage) + moeIn(pp - 1 - stage),
      chunkLayers: held.map((s) => layersPerStage[s]!),
      chunkModelStages: held,
      hasEmbedding: ends,
      hasOutputLayer: ends,
      ...(ends && pp > 1 ? { pipelinePeers: true } : {}),
    };
  });
}
