/**
 * Best-first search over (configuration, dp) candidates with a placement MIP for each, pruned
 * by lower bounds (docs/formulation.md §4). Returns the best plan found, checked by the cost
 * model, and a bound valid for every plan in the space.
 *
 * The search is a list of phases (src/solve/search/), each a function of the shared state
 * (search/state.ts: the candidates, their bounds, the incumbent and the report's counters):
 * 1. enumerate: the candidates and their quick bounds;
 * 2. seed: a first incumbent from the caller's plans and the greedy and concentrated starts;
 * 3. refine bounds: the closed-form bounds of every candidate the quick bound cannot prune;
 * 4. solve placements: the MIPs of the candidates left, on one lane per first backend, each
 *    taking its ring-pattern bound and, when large, a polished greedy start first;
 * 5. second pass: the candidates holding the bound down solved again, tighter, with the time left;
 * 6. exhaust: the placements of the candidates still holding the bound down, enumerated with the time left;
 * 7. finish: the bound, the solver's report and the reasons when nothing fits.
 */
import type { Scenario } from '../model/scenario';
import { enumeratePhase } from './search/enumerate';
import { finishSearch } from './search/finish';
import { queueMips } from './search/mip-queue';
import { solvePlacements } from './search/placements';
import { liftByPipelineCaps, refineBounds } from './search/refine';
import { exhaustBoundHolders } from './search/exhaust-holders';
import { secondPass } from './search/second-pass';
import { seedFromRefined, seedPhase } from './search/seed';
import type { SearchOptions, SearchResult } from './search/types';

export type { SearchOptions, SearchResult } from './search/types';

export async function searchPlans(given: Scenario, options: SearchOptions): Promise<SearchResult> {
  const state = enumeratePhase(given, options);
  const seeded = seedPhase(state);
  const refined = refineBounds(state, seeded);
  const queue = queueMips(state, refined);
  // The greedy placements of the best refined candidates, before their MIPs.
  seedFromRefined(state, refined.coefficients, queue.order);
  const solved = await solvePlacements(state, queue);
  liftByPipelineCaps(state, solved);
  await secondPass(state, solved);
  exhaustBoundHolders(state, solved);
  return finishSearch(state, refined);
}
