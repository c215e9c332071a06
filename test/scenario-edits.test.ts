/** Pure scenario edits for what-if questions, and what removing a link does to routes in this model. */
import { evaluate } from '../src/model/evaluate';
import { changedRoutes } from '../src/model/route-changes';
import { parseScenario } from '../src/model/scenario';
import { applySpecEdit, connectedSiteGroups, forbidIdleGpus, keepSites, parseSpecEdit, removeLink, removeSite, type SpecEdit } from '../src/model/scenario-edits';
import type { ScenarioSpec } from '../src/model/scenario-schema';
import { clone, loadFixture } from './helpers/fixtures';

const threeRegions = loadFixture('llama3-70b-three-regions');
const spec = threeRegions.spec;

const edit = (text: string): SpecEdit => {
  const parsed = parseSpecEdit(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
};
const applied = (text: string): ScenarioSpec => {
  const result = applySpecEdit(spec, edit(text));
  if ('error' in result && typeof result.error === 'string') throw new Error(result.error);
  return result as ScenarioSpec;
};

describe('scenario edits', () => {
  it('scales and sets numbers at a path, by index or by name, leaving the input unchanged', () => {
    const before = clone(spec);
    expect(applied('cluster.links[0].bandwidthGbps=*0.5').cluster.links[0]!.bandwidthGbps).toBe(spec.cluster.links[0]!.bandwidthGbps * 0.5);
    expect(applied('cluster.sites[east].gpus=1024').cluster.sites[0]!.gpus).toBe(1024);
    expect(applied('cluster.sites[1].gpuType=H100-SXM').cluster.sites[1]!.gpuType).toBe('H100-SXM');
    expect(applied('training.maxIterationTimeS=5').training.maxIterationTimeS).toBe(5);
    expect(spec).toEqual(before);
  });

  it('names the problem of an edit that does not parse or does not fit the spec', () => {
    expect(parseSpecEdit('cluster.links[0].bandwidthGbps')).toEqual({ error: expect.stringContaining('expected path=value') });
    expect(parseSpecEdit('cluster.links[0].bandwidthGbps=*half')).toEqual({ error: expect.stringContaining('not a scale factor') });
    expect(parseSpecEdit('=3')).toEqual({ error: expect.stringContaining('path') });
    expect(applySpecEdit(spec, edit('cluster.links[7].bandwidthGbps=*2'))).toEqual({ error: 'cluster.links[7]: no such element (the list has 2)' });
    expect(applySpecEdit(spec, edit('cluster.sites[north].gpus=8'))).toEqual({ error: 'cluster.sites[north]: no such element (the list has 3)' });
    expect(applySpecEdit(spec, edit('cluster.sites[0].name=*2'))).toEqual({ error: 'cluster.sites[0].name: is not a number, so it cannot be scaled' });
    expect(applySpecEdit(spec, edit('training.nothing.here=1'))).toEqual({ error: 'training.nothing: no such field' });
  });

  it('removes a site with its links, and a link alone; finds the groups of sites links still join', () => {
    const noCentral = removeSite(spec, 1);
    expect(noCentral.cluster.sites.map((s) => s.name)).toEqual(['east', 'west']);
    expect(noCentral.cluster.links).toEqual([]);
    expect(connectedSiteGroups(noCentral)).toEqual([['east'], ['west']]);
    const cut = removeLink(spec, 1);
    expect(cut.cluster.links.map((l) => l.between)).toEqual([['east', 'central']]);
    expect(connectedSiteGroups(cut)).toEqual([['east', 'central'], ['west']]);
    expect(connectedSiteGroups(spec)).toEqual([['east', 'central', 'west']]);
    expect(parseScenario(keepSites(cut, ['east', 'central'])).sites.map((s) => s.name)).toEqual(['east', 'central']);
    expect(parseScenario(forbidIdleGpus(spec)).search?.allowIdleGpus).toBe(false);
  });
});

describe('removing a link in this model', () => {
  // Routes are fewest-hop paths, not the fastest: a weak direct link carries the traffic of its two
  // sites even when a strong two-hop detour exists. Removing it moves that traffic onto the detour.
  const triangle = clone(spec);
  triangle.cluster.links = [
    { between: ['east', 'central'], bandwidthGbps: 50, rttMs: 40, lossRate: 0 },
    { between: ['central', 'west'], bandwidthGbps: 12800, rttMs: 2, lossRate: 0 },
    { between: ['east', 'west'], bandwidthGbps: 12800, rttMs: 2, lossRate: 0 },
  ];
  const base = parseScenario(triangle);
  const cut = parseScenario(removeLink(triangle, 0));
  // Pipeline stages 0-3 at east and 4-7 at central: every boundary send crosses east<->central.
  const plan = {
    tp: 8, pp: 8, dp: 16, microBatchSeqs: 1, schedule: '1f1b',
    placement: { replicaGroups: [{ replicas: 16, stageSites: [{ site: 'east', stages: 4 }, { site: 'central', stages: 4 }] }] },
  };

  it('re-routes the traffic between its sites over the other links', () => {
    expect(changedRoutes(base, cut, ['east', 'central'])).toEqual([
      'east->central over east<->west, central<->west (was east<->central)',
    ]);
    expect(changedRoutes(base, cut, ['central', 'west'])).toEqual([]);
  });

  it('can make a plan faster: removal is not monotone when the removed link was the short, slow way', () => {
    const before = evaluate(base, plan);
    const after = evaluate(cut, plan);
    expect(before.fits && after.fits).toBe(true);
    expect(after.predicted.iterationTimeS).toBeLessThan(before.predicted.iterationTimeS);
  });
});
