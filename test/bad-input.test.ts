/**
 * Bad input: every kind named in the spec gets a ScenarioValidationError whose one line per
 * problem names the JSON path.
 */
import { evaluatePlans } from '../src/index';
import { parseScenario } from '../src/model/scenario';
import { ScenarioValidationError } from '../src/model/validation-error';
import { clone, loadFixture, readFixture, readPlanFixture } from './helpers/fixtures';

type Json = any; // test inputs are free-form JSON mutated by hand

const example = readFixture('llama3-405b-two-buildings') as Json;

function validationLines(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioValidationError);
    return (error as ScenarioValidationError).message.split('\n');
  }
  throw new Error('expected a validation error');
}

const scenarioCases: [string, (s: Json) => void, string][] = [
  ['negative count', (s) => { s.cluster.sites[1].gpus = -8; }, 'cluster.sites[1].gpus: must be a positive integer'],
  ['zero count', (s) => { s.cluster.sites[0].gpus = 0; }, 'cluster.sites[0].gpus: must be a positive integer'],
  ['wrong type', (s) => { s.training.seqLen = '8192'; }, 'training.seqLen: must be a number, got "8192"'],
  ['infinity (1e400 in JSON)', (s) => { s.cluster.links[0].bandwidthGbps = Infinity; }, 'cluster.links[0].bandwidthGbps: must be a finite number'],
  ['NaN', (s) => { s.model.hidden = NaN; }, 'model.hidden: must be a finite number'],
  ['huge number', (s) => { s.cluster.sites[0].gpus = 1e15; }, 'cluster.sites[0].gpus: must be at most 100000000'],
  ['fractional count', (s) => { s.model.layers = 12.5; }, 'model.layers: must be an integer, got 12.5'],
  ['unknown GPU type', (s) => { s.cluster.sites[0].gpuType = 'H900'; }, "cluster.sites[0].gpuType: unknown GPU type 'H900'"],
  ['link naming a missing site', (s) => { s.cluster.links[0].between = ['bldg-a', 'bldg-z']; }, "cluster.links[0].between[1]: names no site: 'bldg-z'"],
  ['unknown key', (s) => { s.cluster.sites[0].gpuz = 1; }, "cluster.sites[0]: unknown key 'gpuz'"],
  ['missing section', (s) => { delete s.training; }, 'training: is required (an object)'],
  ['wrong version', (s) => { s.version = 2; }, 'version: must be one of 1, got 2'],
  ['GPUs not a whole number of nodes', (s) => { s.cluster.sites[1].gpus = 8190; }, 'cluster.sites[1].gpus: 8190 GPUs is not a whole number of 8-GPU nodes'],
  ['duplicate site', (s) => { s.cluster.sites[1].name = 'bldg-a'; }, "cluster.sites[1].name: duplicate site name 'bldg-a'"],
  ['search degree that does not divide heads', (s) => { s.search = { tp: [3] }; }, 'search.tp[0]: 3 does not divide 128 attention heads'],
  ['search degree that does not divide the node', (s) => { s.cluster.sites.forEach((x: Json) => { x.gpuType = 'GB200'; x.gpusPerNode = 4; }); s.search = { tp: [16] }; }, 'search.tp[0]: 16 does not divide the 72-GPU scale-up domain'],
  ['heads not dividing hidden', (s) => { s.model.heads = 100; }, 'model.heads: hidden 16384 is not divisible by 100 heads'],
  ['link with neither rtt nor distance', (s) => { delete s.cluster.links[0].rttMs; }, 'cluster.links[0].rttMs: give rttMs or distanceKm'],
  ['disconnected sites', (s) => { s.cluster.links = []; }, "cluster.links: no route from 'bldg-a' to 'bldg-b'"],
  ['fp8 on a GPU without it', (s) => { s.training.precision = 'fp8'; s.cluster.sites[0].gpuType = 'A100-80GB'; }, 'cluster.sites[0]: A100-80GB has no fp8 tensor cores'],
];

describe('invalid scenarios', () => {
  it.each(scenarioCases)('%s', (_name, mutate, expected) => {
    const spec = clone(example);
    mutate(spec);
    const lines = validationLines(() => parseScenario(spec, 'scenario.json'));
    expect(lines.some((line) => line.startsWith(`scenario.json: ${expected}`))).toBe(true);
    for (const line of lines) expect(line).not.toMatch(/\n|^\s+at /);
  });

  it('reports every problem, one line each', () => {
    const spec = clone(example);
    spec.cluster.sites[0].gpus = -1;
    spec.cluster.sites[1].gpuType = 7;
    expect(validationLines(() => parseScenario(spec))).toEqual([
      'cluster.sites[0].gpus: must be a positive integer',
      'cluster.sites[1].gpuType: must be a string, got 7',
    ]);
  });
});

describe('invalid plans', () => {
  const scenario = loadFixture('llama3-405b-two-buildings');
  const plan = readPlanFixture('llama3-405b-two-buildings') as Json;
  const planCases: [string, (p: Json) => void, string][] = [
    ['tp not dividing heads', (p) => { p.tp = 3; }, 'plan.tp: 3 does not divide 128 attention heads'],
    ['tp not dividing an NVL72 domain', (p) => { p.tp = 16; }, 'plan.tp: 16 does not divide the 72-GPU scale-up domain at bldg-a'],
    ['stages not adding up to pp', (p) => { p.placement.replicaGroups[0].stageSites[0].stages = 15; }, 'plan.placement.replicaGroups[0].stageSites: places 15 stages, pp is 16'],
    ['replicas not adding up to dp', (p) => { p.dp = 100; }, 'plan.placement.replicaGroups: hold 128 replicas in all, dp is 100'],
    ['unknown site', (p) => { p.placement.replicaGroups[1].stageSites[0].site = 'bldg-q'; }, "plan.placement.replicaGroups[1].stageSites[0].site: names no site: 'bldg-q'"],
    ['layers not adding up', (p) => { p.placement.layersPerStage[0] = 9; }, 'plan.placement.layersPerStage: adds up to 128 layers, the model has 126'],
    ['ep on a dense model', (p) => { p.ep = 2; }, 'plan.ep: expert parallelism needs a MoE model'],
    ['virtual stages without interleaving', (p) => { p.schedule = '1f1b'; }, "plan.virtualStages: 2 virtual stages need schedule 'interleaved'"],
    ['missing placement on two sites', (p) => { delete p.placement; }, 'plan.placement: is required: the scenario has 2 sites'],
    ['unknown schedule', (p) => { p.schedule = 'chimera'; }, 'plan.schedule: must be one of "gpipe", "1f1b", "interleaved", "zb-h1", "zbv", "interleaved-zb", "dualpipev", "dualpipe", got "chimera"'],
    ['huge run of stages', (p) => { p.placement.replicaGroups[0].stageSites[0].stages = 99999; }, 'plan.placement.replicaGroups[0].stageSites: places 99999 stages, pp is 16'],
    ['pipeline split flag not a boolean', (p) => { p.pipelineSplit = { embeddingAsLayer: 'yes' }; }, 'plan.pipelineSplit.embeddingAsLayer: must be true or false, got "yes"'],
    ['pipeline split turned off where pp x chunks exceed the layers', (p) => { p.virtualStages = 8; p.pipelineSplit = { embeddingAsLayer: false, lossAsLayer: false }; delete p.placement.layersPerStage; },
      'plan.pp: 16 stages x 8 chunks exceed 126 layers; pipelineSplit can count the embedding and the loss as layers'],
    ['more chunks than layers plus embedding and loss', (p) => { p.virtualStages = 9; delete p.placement.layersPerStage; }, 'plan.pp: 16 stages x 9 chunks exceed 126 layers + 2 (embedding/loss counted as layers)'],
    ['a stage that cannot fill its chunks with the split', (p) => { p.virtualStages = 8; p.placement.layersPerStage[0] = 6; p.placement.layersPerStage[1] = 9; },
      'plan.placement.layersPerStage[0]: 6 layers (with the embedding/loss counted as layers, 7) cannot fill 8 virtual chunks'],
  ];
  const nvl72Spec = clone(example);
  nvl72Spec.cluster.sites.forEach((x: Json) => { x.gpuType = 'GB200'; x.gpusPerNode = 4; });
  const nvl72 = parseScenario(nvl72Spec);
  it.each(planCases)('%s', (name, mutate, expected) => {
    const bad = clone(plan);
    mutate(bad);
    const lines = validationLines(() => evaluatePlans(name.includes('NVL72') ? nvl72 : scenario, bad));
    expect(lines.filter((line) => line.startsWith(expected))).toHaveLength(1);
  });

  it('accepts tensor parallelism spanning whole nodes (slow, but valid)', () => {
    expect(() => evaluatePlans(scenario, { ...clone(plan), tp: 16, dp: 64, placement: { ...plan.placement, replicaGroups: [
      { replicas: 32, stageSites: [{ site: 'bldg-a', stages: 16 }] }, { replicas: 32, stageSites: [{ site: 'bldg-b', stages: 16 }] }] } })).not.toThrow();
  });

  it('names the index of a bad plan in an array', () => {
    const bad = clone(plan);
    bad.tp = 5;
    expect(validationLines(() => evaluatePlans(scenario, [plan, bad]))[0]).toBe('plan[1].tp: 5 does not divide 128 attention heads');
  });
});
