/**
 * Validation messages through the CLI: bad inputs of every file kind (scenarios, plans,
 * calibration profiles, calibration runs, Hugging Face configs) with missing fields at
 * various depths, nulls and wrong types exit 2 with one line per problem naming the file and
 * the JSON path, and never print `undefined`.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { run } from './helpers/run-cli';
import { clone, fixturePath, readFixture, readPlanFixture } from './helpers/fixtures';

type Json = any; // free-form JSON mutated by hand

/** A mutation returns a replacement document, or nothing to keep the mutated one (`null` is a replacement). */
const result = (mutated: Json, returned: Json): Json => (returned === undefined ? mutated : returned);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-messages-'));
let counter = 0;
const writeJson = (value: unknown): string => {
  const file = path.join(tmp, `input-${counter++}.json`);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
};

const scenario = (): Json => clone(readFixture('llama3-405b-two-buildings'));
const plan = (): Json => clone(readPlanFixture('llama3-405b-two-buildings'));
const exampleScenario = fixturePath('llama3-405b-two-buildings.json');
const smallScenario = fixturePath('llama3-8b-one-site.json');
const smallPlan = fixturePath('plans/llama3-8b-one-site.plan.json');

/** A calibration profile as `calibrate` writes it (fitted once, one factor to keep it quick, on the example runs). */
let profile: Json;
beforeAll(async () => {
  const out = path.join(tmp, 'profile.json');
  const fitted = await run('calibrate', fixturePath('calibration-runs/example-runs.json'), '--out', out, '--factors', 'matmulPeakEfficiency');
  expect(fitted.code).toBe(0);
  profile = JSON.parse(fs.readFileSync(out, 'utf8'));
});

/** The example runs with their file references made absolute, so that the copy may live anywhere. */
const runsFile = (): Json => {
  const runs = clone(JSON.parse(fs.readFileSync(fixturePath('calibration-runs/example-runs.json'), 'utf8')));
  for (const entry of runs.runs) {
    for (const key of ['scenario', 'plan']) if (typeof entry[key] === 'string') entry[key] = path.resolve(fixturePath('calibration-runs'), entry[key]);
  }
  return runs;
};

interface Case {
  readonly name: string;
  /** Writes the bad input and returns the command line. */
  readonly argv: () => { argv: string[]; file: string };
  /** Lines expected on stderr after `file: `. */
  readonly expected: readonly string[];
}

const validate = (mutate: (s: Json) => Json | void) => () => {
  const s = scenario();
  const file = writeJson(result(s, mutate(s)));
  return { argv: ['validate', file], file };
};
const evaluatePlan = (mutate: (p: Json) => Json | void) => () => {
  const p = plan();
  const file = writeJson(result(p, mutate(p)));
  return { argv: ['evaluate', exampleScenario, '--plan', file], file };
};
const withProfile = (mutate: (p: Json) => Json | void) => () => {
  const p = clone(profile);
  const file = writeJson(result(p, mutate(p)));
  return { argv: ['evaluate', smallScenario, '--plan', smallPlan, '--calibration', file], file };
};
const calibrate = (mutate: (r: Json) => Json | void) => () => {
  const r = runsFile();
  const file = writeJson(result(r, mutate(r)));
  return { argv: ['calibrate', file, '--out', path.join(tmp, 'never-written.json')], file };
};
const importModel = (config: Json) => () => {
  const file = writeJson(config);
  return { argv: ['import-model', file], file };
};

const cases: Case[] = [
  // Scenarios: the empty object, missing fields at every depth, nulls, wrong types.
  { name: 'scenario {}', argv: validate(() => ({})), expected: ['version: required (1)', 'name: is required (a string)', 'model: is required (an object)', 'training: is required (an object)', 'cluster: is required (an object)'] },
  { name: 'scenario without version', argv: validate((s) => { delete s.version; }), expected: ['version: required (1)'] },
  { name: 'scenario with version null', argv: validate((s) => { s.version = null; }), expected: ['version: must be one of 1, got null'] },
  { name: 'scenario null', argv: validate(() => null), expected: ['must be an object, got null'] },
  { name: 'model field missing', argv: validate((s) => { delete s.model.layers; }), expected: ['model.layers: is required (a number)'] },
  { name: 'model field null', argv: validate((s) => { s.model.hidden = null; }), expected: ['model.hidden: must be a number, got null'] },
  { name: 'MLA attention without kind', argv: validate((s) => { s.model.attention = { kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 }; }), expected: ['model.attention.kind: required ("mla")'] },
  { name: 'moe section empty', argv: validate((s) => { s.model.moe = {}; }), expected: ['model.moe.experts: is required (a number)', 'model.moe.topK: is required (a number)'] },
  { name: 'site missing its GPU count', argv: validate((s) => { delete s.cluster.sites[1].gpus; }), expected: ['cluster.sites[1].gpus: is required (a number)'] },
  { name: 'site null', argv: validate((s) => { s.cluster.sites[0] = null; }), expected: ['cluster.sites[0]: must be an object, got null'] },
  { name: 'link end missing', argv: validate((s) => { s.cluster.links[0].between = ['bldg-a']; }), expected: ['cluster.links[0].between: must have at least 2 items, has 1'] },
  { name: 'empty name, loss rate too high, empty search list', argv: validate((s) => { s.name = ''; s.cluster.links[0].lossRate = 0.9; s.search = { tp: [] }; }), expected: ['name: must not be empty', 'cluster.links[0].lossRate: must be at most 0.5, got 0.9', 'search.tp: must have at least 1 item, has 0'] },
  { name: 'sites a string', argv: validate((s) => { s.cluster.sites = 'bldg-a'; }), expected: ['cluster.sites: must be an array, got "bldg-a"'] },
  { name: 'search zero out of range and null', argv: validate((s) => { s.search = { zero: [5, null] }; }), expected: ['search.zero[0]: must be 0, 1, 2 or 3, got 5', 'search.zero[1]: must be 0, 1, 2 or 3, got null'] },
  { name: 'precision null', argv: validate((s) => { s.training.precision = null; }), expected: ['training.precision: must be one of "bf16", "fp8", got null'] },
  // Plans.
  { name: 'plan {}', argv: evaluatePlan(() => ({})), expected: ['plan.tp: is required (a number)', 'plan.pp: is required (a number)'] },
  { name: 'plan schedule null', argv: evaluatePlan((p) => { p.schedule = null; }), expected: ['plan.schedule: must be one of'] },
  { name: 'plan replica group without stage sites', argv: evaluatePlan((p) => { delete p.placement.replicaGroups[0].stageSites; }), expected: ['plan.placement.replicaGroups[0].stageSites: is required (an array)'] },
  { name: 'plan zero a string', argv: evaluatePlan((p) => { p.zero = 'one'; }), expected: ['plan.zero: must be 0, 1, 2 or 3, got "one"'] },
  // Calibration profiles.
  { name: 'profile {}', argv: withProfile(() => ({})), expected: ['version: required (1)', 'kind: required ("scaleacross-calibration")', 'created: is required (a string)'] },
  { name: 'profile run without metric', argv: withProfile((p) => { delete p.runs[0].metric; }), expected: ['runs[0].metric: required (one of "iterationTimeS", "tokensPerSecondPerGpu", "mfu")'] },
  { name: 'profile factor null', argv: withProfile((p) => { p.factors[Object.keys(p.factors)[0]!] = null; }), expected: ['factors.'] },
  // Calibration runs.
  { name: 'runs entry {}', argv: calibrate((r) => { r.runs[0] = {}; }), expected: ['runs[0].scenario: is required (a string or an object)', 'runs[0].plan: is required (a string or an object)', 'runs[0].measured: is required (an object)'] },
  { name: 'runs entry with an inline scenario {}', argv: calibrate((r) => { r.runs[1].scenario = {}; }), expected: ['runs[1].scenario.version: required (1)'] },
  { name: 'runs entry with scenario null', argv: calibrate((r) => { r.runs[2].scenario = null; }), expected: ['runs[2].scenario: must be a string or an object, got null'] },
  { name: 'runs entry with a plan that is an array', argv: calibrate((r) => { r.runs[0].plan = []; }), expected: ['runs[0].plan: must be a string or an object, got an array'] },
  { name: 'runs measurement null', argv: calibrate((r) => { r.runs[0].measured.iterationTimeS = null; }), expected: ['runs[0].measured.iterationTimeS'] },
  // Hugging Face configs.
  { name: 'HF config without sizes', argv: importModel({ model_type: 'llama' }), expected: ["hidden_size: is required for model_type 'llama'"] },
  { name: 'HF config with null and wrong types', argv: importModel({ model_type: 'llama', hidden_size: null, num_hidden_layers: 'x' }), expected: ['num_hidden_layers: must be a non-negative integer, got "x"'] },
];

describe('bad inputs through the CLI: exit 2, file and JSON path named, never `undefined`', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { argv, file } = c.argv();
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    const lines = result.err.trimEnd().split('\n');
    for (const expected of c.expected) expect(lines.some((line) => line.startsWith(`${file}: ${expected}`))).toBe(true);
    // Every line names the file and (but for a root-level problem) a JSON path.
    for (const line of lines) expect(line.startsWith(`${file}: `)).toBe(true);
    expect(result.err).not.toMatch(/undefined/);
  });
});
