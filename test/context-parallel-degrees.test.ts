/** The context-parallel degrees the planner searches by default (docs/formulation.md §1). */
import { defaultContextParallelDegrees, defaultPipelineDegrees, enumerateConfigs, FULL_SPACE } from '../src/formulation/search-space';
import { parseScenario } from '../src/model/scenario';
import { readFixture } from './helpers/fixtures';

type Json = any; // a scenario document being changed

describe('default context-parallel degrees', () => {
  it('1 below 32k tokens; 1-8 from 32k; larger powers of two while every rank keeps 16k tokens', () => {
    expect(defaultContextParallelDegrees(4096)).toEqual([1]);
    expect(defaultContextParallelDegrees(32768)).toEqual([1, 2, 4, 8]);
    expect(defaultContextParallelDegrees(262144)).toEqual([1, 2, 4, 8, 16]);
    expect(defaultContextParallelDegrees(524288)).toEqual([1, 2, 4, 8, 16, 32]);
    expect(defaultContextParallelDegrees(1048576)).toEqual([1, 2, 4, 8, 16, 32, 64]);
  });

  it('reach the degrees NeMo ran its 512k and 1M Llama 2 7B jobs with (cp 16 and 32, calibration.md section F)', () => {
    const spec = readFixture('small/one-site') as Json;
    delete spec.search;
    for (const [seqLen, cp] of [[524288, 16], [1048576, 32]] as const) {
      const scenario = parseScenario({ ...spec, training: { ...spec.training, seqLen, globalBatchSeqs: 4 } }, 'long');
      expect(enumerateConfigs(scenario, FULL_SPACE).some((c) => c.cp === cp)).toBe(true);
    }
  });
});

describe('default pipeline degrees', () => {
  it('powers of two; with every GPU to be used, also the divisors of the GPU count up to 64 (280 GPUs: pp 35)', () => {
    const spec = readFixture('small/one-site') as Json;
    delete spec.search;
    spec.cluster.sites[0].gpus = 280;
    const idleAllowed = parseScenario(spec, 'x');
    expect(defaultPipelineDegrees(idleAllowed)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    const everyGpu = parseScenario({ ...spec, search: { allowIdleGpus: false } }, 'x');
    expect(defaultPipelineDegrees(everyGpu)).toEqual([1, 2, 4, 5, 7, 8, 10, 14, 16, 20, 28, 32, 35, 40, 56, 64]);
  });
});
