/** The scenarios built into the page: the repository's fixtures, bundled as JSON. */
import deepseekTwoSites from '../../fixtures/deepseek-v3-moe-two-sites.json';
import badBatch from '../../fixtures/infeasible/batch-divisibility.json';
import badGpuCount from '../../fixtures/infeasible/gpu-count.json';
import badLink from '../../fixtures/infeasible/link-capacity.json';
import badMemoryAndBatch from '../../fixtures/infeasible/memory-and-batch.json';
import badMemory from '../../fixtures/infeasible/memory.json';
import badSearchSpace from '../../fixtures/infeasible/search-space.json';
import twoBuildings from '../../fixtures/llama3-405b-two-buildings.json';
import threeRegions from '../../fixtures/llama3-70b-three-regions.json';
import oneSite from '../../fixtures/llama3-8b-one-site.json';
import smallFourSites from '../../fixtures/small/four-site-mesh.json';
import smallMoe from '../../fixtures/small/moe-two-sites.json';
import smallThree from '../../fixtures/small/three-heterogeneous.json';
import smallTwo from '../../fixtures/small/two-sites.json';

export interface Fixture {
  /** The fixture's path in the repository, e.g. `fixtures/infeasible/memory.json`. */
  readonly id: string;
  readonly spec: unknown;
}

export const FIXTURES: readonly Fixture[] = [
  { id: 'fixtures/llama3-405b-two-buildings.json', spec: twoBuildings },
  { id: 'fixtures/llama3-70b-three-regions.json', spec: threeRegions },
  { id: 'fixtures/llama3-8b-one-site.json', spec: oneSite },
  { id: 'fixtures/deepseek-v3-moe-two-sites.json', spec: deepseekTwoSites },
  { id: 'fixtures/small/two-sites.json', spec: smallTwo },
  { id: 'fixtures/small/three-heterogeneous.json', spec: smallThree },
  { id: 'fixtures/small/four-site-mesh.json', spec: smallFourSites },
  { id: 'fixtures/small/moe-two-sites.json', spec: smallMoe },
  { id: 'fixtures/infeasible/memory.json', spec: badMemory },
  { id: 'fixtures/infeasible/gpu-count.json', spec: badGpuCount },
  { id: 'fixtures/infeasible/link-capacity.json', spec: badLink },
  { id: 'fixtures/infeasible/batch-divisibility.json', spec: badBatch },
  { id: 'fixtures/infeasible/memory-and-batch.json', spec: badMemoryAndBatch },
  { id: 'fixtures/infeasible/search-space.json', spec: badSearchSpace },
];

/** The scenario shown when the page is given none: the two-building example. */
export const DEFAULT_FIXTURE = FIXTURES[0]!;
