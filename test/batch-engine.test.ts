/** The batch engine's pure parts: sweep expansion and ids, sharding, merge, CSV, the results file. */
import fc from 'fast-check';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse as parseCsv } from 'csv-parse/sync';
import { canonicalJson, scenarioId, solveKey } from '../src/model/canonical-json';
import { resultsCsv } from '../src/batch/csv';
import { mergeRecords } from '../src/batch/merge';
import type { BatchRecord } from '../src/batch/record';
import { buildScenarioList } from '../src/batch/scenario-list';
import { reconcileResumed } from '../src/batch/resume';
import { inShard, parseShard, shardOf } from '../src/batch/shard';
import { statusCounts, summaryTable } from '../src/batch/summary';
import { expandSweep, parseSweep } from '../src/batch/sweep';
import { sweepChartSvg } from '../src/batch/svg-chart';
import { ResultsAppender, readResultsFile } from '../src/io/results-store';
import { ScenarioValidationError } from '../src/model/validation-error';
import { clone, readFixture } from './helpers/fixtures';

const twoSites = (): Record<string, unknown> => clone(readFixture('small/two-sites') as Record<string, unknown>);
const sweep = (body: Record<string, unknown>) => parseSweep({ version: 1, sweep: 's', base: 'x.json', ...body }, 'sweep.json');
const expand = (body: Record<string, unknown>, base: unknown = twoSites()) => expandSweep(sweep(body), base, 'sweep.json', 'base.json');
const issuesOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ScenarioValidationError) return error.message;
    throw error;
  }
  throw new Error('expected a ScenarioValidationError');
};

describe('sweep expansion', () => {
  it('cartesian product: every combination once, first axis slowest, values set at their paths', () => {
    const result = expand({ axes: { 'cluster.links[0].bandwidthGbps': [400, 1600, 6400], 'cluster.sites[1].gpus': [8, 16] } });
    expect(result.scenarios).toHaveLength(6);
    const got = result.scenarios.map((s) => {
      const spec = s.spec as { cluster: { links: { bandwidthGbps: number }[]; sites: { gpus: number }[] } };
      return [spec.cluster.links[0]!.bandwidthGbps, spec.cluster.sites[1]!.gpus];
    });
    expect(got).toEqual([[400, 8], [400, 16], [1600, 8], [1600, 16], [6400, 8], [6400, 16]]);
    expect(result.scenarios.map((s) => s.pointIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(result.scenarios[3]!.point).toEqual([
      { path: 'cluster.links[0].bandwidthGbps', index: 1, label: 1600 },
      { path: 'cluster.sites[1].gpus', index: 1, label: 16 },
    ]);
    expect(result.axes).toEqual(['cluster.links[0].bandwidthGbps', 'cluster.sites[1].gpus']);
  });

  it('replaces whole sub-objects (a list of models), labelled by name, and leaves the base untouched', () => {
    const base = twoSites();
    const baseText = JSON.stringify(base);
    const model = (base as { model: Record<string, unknown> }).model;
    const result = expand({ axes: { model: [{ ...model, name: 'small' }, { ...model, name: 'deep', layers: 16 }] } }, base);
    expect(result.scenarios.map((s) => (s.spec as { model: { name: string; layers: number } }).model)).toMatchObject([{ name: 'small', layers: 8 }, { name: 'deep', layers: 16 }]);
    expect(result.scenarios.map((s) => s.point[0]!.label)).toEqual(['small', 'deep']);
    expect(JSON.stringify(base)).toBe(baseText);
  });

  it('explicit points: one scenario per point, in order, with only its paths changed', () => {
    const result = expand({ points: [{ 'cluster.links[0].bandwidthGbps': 100 }, { 'cluster.links[0].bandwidthGbps': 800, 'cluster.links[0].rttMs': 30 }] });
    expect(result.scenarios).toHaveLength(2);
    const links = result.scenarios.map((s) => (s.spec as { cluster: { links: { bandwidthGbps: number; rttMs: number }[] } }).cluster.links[0]);
    expect(links).toMatchObject([{ bandwidthGbps: 100, rttMs: 4 }, { bandwidthGbps: 800, rttMs: 30 }]);
    expect(result.axes).toEqual(['cluster.links[0].bandwidthGbps', 'cluster.links[0].rttMs']);
  });

  it('a new optional key the spec knows may be set (site pod size)', () => {
    expect(expand({ axes: { 'cluster.sites[1].podGpus': [4] } }).scenarios).toHaveLength(1);
  });

  it.each([
    ['cluster.links[7].bandwidthGbps', 'sweep.json: axes["cluster.links[7].bandwidthGbps"]: index 7 is out of range: cluster.links has 1 element in the base scenario'],
    ['cluster.fabric.bandwidthGbps', 'sweep.json: axes["cluster.fabric.bandwidthGbps"]: cluster.fabric does not exist in the base scenario'],
    ['cluster.links[0].bandwidthGbs', 'sweep.json: axes["cluster.links[0].bandwidthGbs"]: "bandwidthGbs" is not a key of cluster.links[0] in the scenario spec'],
    ['cluster..links', 'sweep.json: axes["cluster..links"]: "cluster..links" is not a spec path (expected keys and [index], e.g. cluster.links[0].bandwidthGbps)'],
    ['model.layers[0]', 'sweep.json: axes["model.layers[0]"]: model.layers is a number, not an array, in the base scenario'],
  ])('a bad axis path %s is one error line naming the sweep file and the axis', (axis, message) => {
    expect(issuesOf(() => expand({ axes: { [axis]: [1] } }))).toBe(message);
  });

  it('rejects a sweep with both or neither of axes and points, and an empty axis', () => {
    expect(issuesOf(() => sweep({}))).toContain('exactly one of "axes" (cartesian product) or "points"');
    expect(issuesOf(() => sweep({ axes: { model: [1] }, points: [{ model: 1 }] }))).toContain('exactly one of');
    expect(issuesOf(() => sweep({ axes: { model: [] } }))).toBe('sweep.json: axes.model: needs at least one value');
  });

  it('a value that makes the scenario invalid is not an expansion error (the batch records it as invalid)', () => {
    expect(expand({ axes: { 'cluster.sites[1].gpus': [-4, 8] } }).scenarios).toHaveLength(2);
  });

  it('points: a point whose path does not fit is returned with its error, the other points are expanded', () => {
    const result = expand({ points: [{ 'cluster.links[7].bandwidthGbps': 100 }, { 'cluster.links[0].bandwidthGbps': 800 }, {}] });
    expect(result.scenarios.map((s) => s.invalid)).toEqual([
      'points[0]["cluster.links[7].bandwidthGbps"]: index 7 is out of range: cluster.links has 1 element in the base scenario',
      undefined,
      'points[2]: sets no path',
    ]);
    expect(result.scenarios[0]!.spec).toBeNull();
    expect(result.scenarios[0]!.point).toEqual([{ path: 'cluster.links[7].bandwidthGbps', index: 0, label: 100 }]);
    expect((result.scenarios[1]!.spec as { cluster: { links: { bandwidthGbps: number }[] } }).cluster.links[0]!.bandwidthGbps).toBe(800);
  });
});

describe('scenario ids', () => {
  it('depend on content only: key order and $schema do not matter, any change does', () => {
    const a = twoSites();
    const reordered = Object.fromEntries(Object.entries(a).reverse());
    expect(scenarioId(reordered)).toBe(scenarioId(a));
    expect(scenarioId({ ...a, $schema: 'elsewhere.json' })).toBe(scenarioId(a));
    expect(scenarioId(a)).toMatch(/^[0-9a-f]{16}$/);
    const b = twoSites();
    (b as { cluster: { links: { bandwidthGbps: number }[] } }).cluster.links[0]!.bandwidthGbps = 201;
    expect(scenarioId(b)).not.toBe(scenarioId(a));
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
  });

  it('are stable across expansions, and the solve key ignores the name', () => {
    const body = { axes: { 'cluster.links[0].bandwidthGbps': [400, 1600] } };
    expect(expand(body).scenarios.map((s) => scenarioId(s.spec))).toEqual(expand(body).scenarios.map((s) => scenarioId(s.spec)));
    const renamed = { ...twoSites(), name: 'other' };
    expect(scenarioId(renamed)).not.toBe(scenarioId(twoSites()));
    expect(solveKey(renamed)).toBe(solveKey(twoSites()));
  });

  it('a scenario list dedupes equal content (first source kept, others in alsoFrom) and numbers ordinals', () => {
    const sw = sweep({ points: [{ 'cluster.links[0].bandwidthGbps': 200 }, { 'cluster.links[0].bandwidthGbps': 800 }] });
    const list = buildScenarioList([
      { kind: 'scenario', file: 'two-sites.json', spec: twoSites() },
      { kind: 'sweep', file: 'sweep.json', sweep: sw, base: twoSites(), baseSource: 'base.json' },
    ]);
    // The first point equals the base (bandwidth 200): one scenario, two sources.
    expect(list.scenarios).toHaveLength(2);
    expect(list.scenarios[0]!.source).toEqual({ kind: 'file', file: 'two-sites.json' });
    expect(list.scenarios[0]!.alsoFrom).toEqual([{ kind: 'sweep', file: 'sweep.json', sweep: 's', pointIndex: 0, axes: { 'cluster.links[0].bandwidthGbps': 200 } }]);
    expect(list.scenarios.map((s) => s.ordinal)).toEqual([0, 1]);
  });
});

describe('inputs that are no scenario', () => {
  const invalidInput = (file: string, fingerprint: string) => ({ kind: 'invalid' as const, file, error: `${file}: malformed JSON at line 1, column 2: unexpected "b"`, fingerprint });

  it('are one invalid entry each, keyed by what was read: equal content shares an id, a fix gives a new one', () => {
    const list = buildScenarioList([
      invalidInput('a.json', '{bad'),
      { kind: 'scenario', file: 'two-sites.json', spec: twoSites() },
      invalidInput('b.json', '{bad'),
      invalidInput('c.json', '{worse'),
    ]);
    expect(list.scenarios.map((s) => [s.source.file, s.invalid ?? null, s.spec === null])).toEqual([
      ['a.json', 'a.json: malformed JSON at line 1, column 2: unexpected "b"', true],
      ['two-sites.json', null, false],
      ['c.json', 'c.json: malformed JSON at line 1, column 2: unexpected "b"', true],
    ]);
    expect(list.scenarios[0]!.alsoFrom).toEqual([{ kind: 'file', file: 'b.json' }]);
    const [bad, valid, worse] = list.scenarios;
    expect(bad!.id).toMatch(/^[0-9a-f]{16}$/);
    expect(bad!.id).not.toBe(worse!.id);
    expect(bad!.solveKey).toBe(bad!.id);
    expect(valid!.id).toBe(scenarioId(twoSites()));
    // Fixing the file (here: to the valid scenario) changes its id and so the batch key.
    const fixed = buildScenarioList([{ kind: 'scenario', file: 'a.json', spec: twoSites() }, { kind: 'scenario', file: 'two-sites.json', spec: twoSites() }]);
    expect(fixed.scenarios.map((s) => s.id)).not.toContain(bad!.id);
    expect(fixed.batchKey).not.toBe(list.batchKey);
  });

  it('a sweep whose axis path fits no point is one invalid entry naming the sweep file and the axis; a points sweep is split per point', () => {
    const axes = sweep({ axes: { 'cluster.links[7].bandwidthGbps': [100, 200] } });
    const points = parseSweep({ version: 1, sweep: 'p', base: 'x.json', points: [{ 'cluster.links[7].bandwidthGbps': 100 }, { 'cluster.links[0].bandwidthGbps': 800 }] }, 'points.json');
    const list = buildScenarioList([
      { kind: 'sweep', file: 'sweep.json', sweep: axes, base: twoSites(), baseSource: 'base.json' },
      { kind: 'sweep', file: 'points.json', sweep: points, base: twoSites(), baseSource: 'base.json' },
    ]);
    expect(list.scenarios.map((s) => s.invalid ?? null)).toEqual([
      'sweep.json: axes["cluster.links[7].bandwidthGbps"]: index 7 is out of range: cluster.links has 1 element in the base scenario',
      'points.json: points[0]["cluster.links[7].bandwidthGbps"]: index 7 is out of range: cluster.links has 1 element in the base scenario',
      null,
    ]);
    expect(list.scenarios[0]!.source).toEqual({ kind: 'file', file: 'sweep.json' });
    expect(list.scenarios[1]!.source).toEqual({ kind: 'sweep', file: 'points.json', sweep: 'p', pointIndex: 0, axes: { 'cluster.links[7].bandwidthGbps': 100 } });
    // Only the sweep that expanded gets charts.
    expect(list.sweeps.map((s) => s.file)).toEqual(['points.json']);
  });
});

describe('sharding', () => {
  it('parses i/n and rejects anything else', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/3', '4/3', '1/0', 'a/b', '1-3', '']) expect(typeof parseShard(bad)).toBe('string');
  });

  it('puts every scenario in exactly one shard, for any ids and shard count', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.stringMatching(/^[0-9a-f]{16}$/), { maxLength: 60 }),
      fc.integer({ min: 1, max: 40 }),
      (ids, count) => {
        for (const id of ids) {
          const shards = Array.from({ length: count }, (_, i) => i + 1).filter((index) => inShard(id, { index, count }));
          if (shards.length !== 1 || shards[0] !== shardOf(id, count) + 1) return false;
        }
        return true;
      },
    ));
  });

  it('splits a real sweep roughly evenly', () => {
    const list = buildScenarioList([{ kind: 'sweep', file: 'sweep.json', sweep: sweep({ axes: { 'cluster.links[0].bandwidthGbps': Array.from({ length: 300 }, (_, i) => i + 1) } }), base: twoSites(), baseSource: 'b' }]);
    const sizes = [1, 2, 3].map((index) => list.scenarios.filter((s) => inShard(s.id, { index, count: 3 })).length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(300);
    for (const size of sizes) expect(size).toBeGreaterThan(70);
  });
});

const record = (over: Partial<BatchRecord> & { id: string; ordinal: number }): BatchRecord => ({
  total: 3, batchKey: 'k', solveKey: over.id, name: 'n', source: { kind: 'file', file: 'f.json' }, alsoFrom: [], status: 'optimal',
  iterationTimeS: 1, iterationTimeLowS: 0.9, iterationTimeHighS: 1.2, intervalLevel: 0.9, intervalBasis: 'test', mayNotFit: false, mfu: 0.5, gap: 0, lowerBoundS: 1, productionSpeedup: 1, ppAcrossSpeedup: null, productionSpeedupAtLeast: 0.9, ppAcrossSpeedupAtLeast: null, plan: null, reasons: [], error: null,
  timing: { wallTimeS: 1, solverTimeS: 1, timeLimitS: 1, cachedFrom: null, finishedAt: '' },
  ...over,
});

describe('merge', () => {
  it('keeps one record per id (the most definite status), sorted by ordinal, and reports missing ordinals', () => {
    const report = mergeRecords([
      record({ id: 'c', ordinal: 2, status: 'error' }),
      record({ id: 'a', ordinal: 0 }),
      record({ id: 'c', ordinal: 2, status: 'feasible' }),
      record({ id: 'a', ordinal: 0, status: 'timeout' }),
    ]);
    expect(report.records.map((r) => [r.id, r.status])).toEqual([['a', 'optimal'], ['c', 'feasible']]);
    expect(report.duplicatesDropped).toBe(2);
    expect(report.missing).toEqual([{ ordinal: 1, id: null, label: null }]);
    expect(report.problems).toEqual([]);
  });

  it('refuses to call records of different batches complete', () => {
    const report = mergeRecords([record({ id: 'a', ordinal: 0 }), record({ id: 'b', ordinal: 1, batchKey: 'other' })]);
    expect(report.problems[0]).toContain('2 different batches');
  });
});

describe('invalid records in merge, summary and CSV', () => {
  const invalid = (id: string, ordinal: number, error: string) => record({ id, ordinal, status: 'invalid', error, name: null, iterationTimeS: null, iterationTimeLowS: null, iterationTimeHighS: null, intervalLevel: null, mfu: null, gap: null, lowerBoundS: null, productionSpeedup: null });

  it('merge counts an invalid record as a result (complete), and prefers a solved record of the same id', () => {
    const report = mergeRecords([invalid('a', 0, 'a.json: malformed JSON'), record({ id: 'b', ordinal: 1 }), invalid('c', 2, 'c.json: version: required (1)'), record({ id: 'c', ordinal: 2 })]);
    expect(report.records.map((r) => [r.id, r.status])).toEqual([['a', 'invalid'], ['b', 'optimal'], ['c', 'optimal']]);
    expect(report.missing).toEqual([]);
    expect(report.problems).toEqual([]);
  });

  it('the summary counts and lists them; the CSV carries their error', () => {
    const records = [invalid('a', 0, 'bad.json: malformed JSON at line 1, column 2: unexpected "b"'), record({ id: 'b', ordinal: 1 })];
    expect(statusCounts(records)).toBe('2 scenarios: 1 optimal, 1 invalid');
    const table = summaryTable(records).split('\n');
    expect(table[2]).toMatch(/^\(no name\) \(f\.json\)\s+invalid\s+-\s+-\s+-\s+-\s+-$/);
    const rows = parseCsv(resultsCsv(records)) as string[][];
    const header = rows[0]!;
    expect(rows[1]![header.indexOf('status')]).toBe('invalid');
    expect(rows[1]![header.indexOf('error')]).toBe('bad.json: malformed JSON at line 1, column 2: unexpected "b"');
    expect(rows[1]![header.indexOf('iterationTimeS')]).toBe('');
  });
});

describe('resume after inputs changed', () => {
  const before = buildScenarioList([
    { kind: 'invalid', file: 'a.json', error: 'a.json: malformed JSON at line 1, column 2: unexpected "b"', fingerprint: '{bad' },
    { kind: 'scenario', file: 'two-sites.json', spec: twoSites() },
  ]);
  const asRecord = (s: (typeof before.scenarios)[number], list: typeof before) => record({
    id: s.id, ordinal: s.ordinal, total: list.scenarios.length, batchKey: list.batchKey, source: s.source, alsoFrom: s.alsoFrom,
    ...(s.invalid !== undefined ? { status: 'invalid' as const, error: s.invalid } : {}),
  });
  const written = [...before.scenarios.map((s) => asRecord(s, before)), record({ id: 'elsewhere', ordinal: 0, status: 'invalid', source: { kind: 'file', file: 'not-an-input.json' } })];

  it('the same inputs: nothing changes', () => {
    const resumed = reconcileResumed(written, before);
    expect(resumed.changed).toBe(false);
    expect(resumed.records).toEqual(written);
  });

  it('a fixed file: its invalid record is dropped, the others are carried into the new batch', () => {
    const after = buildScenarioList([
      { kind: 'scenario', file: 'a.json', spec: { ...twoSites(), name: 'fixed' } },
      { kind: 'scenario', file: 'two-sites.json', spec: twoSites() },
    ]);
    const resumed = reconcileResumed(written, after);
    expect(resumed.changed).toBe(true);
    expect(resumed.superseded.map((r) => r.source.file)).toEqual(['a.json']);
    // The record of another file stays (not counted by the batch); the solved one joins the new batch.
    expect(resumed.records.map((r) => [r.id, r.ordinal, r.total, r.batchKey])).toEqual([
      [scenarioId(twoSites()), 1, 2, after.batchKey],
      ['elsewhere', 0, 3, 'k'],
    ]);
    expect(resumed.carriedOver).toBe(1);
    // The carried-over record keeps its answer and timing.
    expect(resumed.records[0]!.timing).toEqual(written[1]!.timing);
  });

  it('a file still invalid keeps its record', () => {
    const resumed = reconcileResumed(written, buildScenarioList([
      { kind: 'invalid', file: 'a.json', error: 'a.json: malformed JSON at line 1, column 2: unexpected "b"', fingerprint: '{bad' },
    ]));
    expect(resumed.superseded).toEqual([]);
    expect(resumed.records.map((r) => r.id)).toEqual(written.map((r) => r.id));
  });
});

describe('results CSV', () => {
  it('quotes commas, quotes and newlines per RFC 4180 and round-trips through a CSV parser', () => {
    const tricky = 'has "quotes", a comma\nand a newline';
    const csv = resultsCsv([
      record({ id: 'a', ordinal: 0, name: tricky, status: 'error', error: tricky, iterationTimeS: null, mfu: null }),
      record({ id: 'b', ordinal: 1, source: { kind: 'sweep', file: 's.json', sweep: 'bw', pointIndex: 0, axes: { 'cluster.links[0].bandwidthGbps': 400 } } }),
    ]);
    expect(csv).toContain('"has ""quotes"", a comma\nand a newline"');
    expect(csv.split('\r\n')[0]!.startsWith('id,ordinal,name,source,sweep,cluster.links[0].bandwidthGbps,status,')).toBe(true);
    const rows = parseCsv(csv) as string[][];
    expect(rows).toHaveLength(3);
    const header = rows[0]!;
    expect(rows[1]![header.indexOf('name')]).toBe(tricky);
    expect(rows[1]![header.indexOf('error')]).toBe(tricky);
    expect(rows[1]![header.indexOf('iterationTimeS')]).toBe('');
    expect(rows[2]![header.indexOf('cluster.links[0].bandwidthGbps')]).toBe('400');
  });
});

describe('results file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scaleacross-results-'));

  it('appends whole lines; a cut-short last line is ignored, and truncated when repairing', () => {
    const file = path.join(dir, 'r.ndjson');
    const appender = new ResultsAppender(file);
    appender.append(record({ id: 'a', ordinal: 0 }));
    appender.append(record({ id: 'b', ordinal: 1 }));
    appender.close();
    const whole = fs.readFileSync(file, 'utf8');
    fs.appendFileSync(file, JSON.stringify(record({ id: 'c', ordinal: 2 })).slice(0, 40));
    expect(readResultsFile(file, false).records.map((r) => r.id)).toEqual(['a', 'b']);
    const repaired = readResultsFile(file, true);
    expect(repaired.records.map((r) => r.id)).toEqual(['a', 'b']);
    expect(repaired.droppedTailBytes).toBe(40);
    expect(fs.readFileSync(file, 'utf8')).toBe(whole);
  });

  it('a corrupt complete line is an error naming the file and line', () => {
    const file = path.join(dir, 'bad.ndjson');
    fs.writeFileSync(file, `${JSON.stringify(record({ id: 'a', ordinal: 0 }))}\n{oops\n`);
    expect(issuesOf(() => readResultsFile(file, true))).toBe(`${file}: line 2: malformed JSON: not a batch result line`);
  });
});

describe('sweep chart', () => {
  it('is a self-contained SVG with a point per solved scenario and a cross per scenario without a plan', () => {
    const records = [400, 1600, 6400].map((bw, i) => record({
      id: String(i), ordinal: i, status: i === 0 ? 'infeasible' : 'optimal', iterationTimeS: i === 0 ? null : 10 / i,
      source: { kind: 'sweep', file: 's.json', sweep: 'bw', pointIndex: i, axes: { 'cluster.links[0].bandwidthGbps': bw } },
    }));
    const svg = sweepChartSvg(records, 'cluster.links[0].bandwidthGbps', 'bw');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).not.toMatch(/href=|<script/);
    expect(svg.match(/<circle /g)).toHaveLength(2);
    expect(svg).toContain('no plan (1)');
    expect(svg).toContain('(log scale)');
  });
});
