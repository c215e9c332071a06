/**
 * Where a planner-scaling row's gap comes from: plan without baselines at each time limit, and
 * print the plan's replica groups (group-floors.ts: eq. 5.4, 5.8, 5.9 and the span of each), its
 * time and shape, the bound and the candidate holding it; the plan goes to the temporary folder.
 * Run: npm run build && node dist/bench/gap-sources.js [rows, default 1,3,7] [limits, default 10,60]
 */
import { defaultBackends, defaultConcurrentBackends, plan } from '../src/solve/plan';
import { tmpdir } from 'os';
import * as path from 'path';
import { writeTextFile } from '../src/io/files';
import { layOutPlan } from '../src/model/placement';
import { groupFloors } from './group-floors';
import { ROWS, scenarioFor } from './plan-scaling-scenarios';

async function main(): Promise<void> {
  const rows = (process.argv[2] ?? '1,3,7').split(',').map(Number);
  const limits = (process.argv[3] ?? '10,60').split(',').map(Number);
  const backends = defaultBackends();
  const concurrentBackends = defaultConcurrentBackends();
  try {
    for (const index of rows) {
      const row = ROWS[index]!;
      for (const limit of limits) {
        const result = await plan(scenarioFor(row), { timeLimitS: limit, gap: 0.01, backends, concurrentBackends, baselines: false });
        const p = result.plan;
        const h = result.solver.boundHolder;
        if (result.plan) {
          writeTextFile(path.join(tmpdir(), `gap-sources-row-${index}-${limit}s.plan.json`), JSON.stringify(result.plan));
          for (const line of groupFloors(scenarioFor(row), layOutPlan(scenarioFor(row), result.plan))) console.log(line);
        }
        console.log(JSON.stringify({
          row: index, model: row.model, sites: row.sites.length, limit, status: result.status, timeS: result.solver.timeS,
          planS: result.evaluation?.predicted.iterationTimeS, boundS: result.bound.lowerBoundS, gap: result.bound.gap,
          shape: p ? `tp${p.tp} cp${p.cp} ep${p.ep} pp${p.pp} dp${p.dp} b${p.microBatchSeqs} ${p.schedule} rc ${p.recompute} z${p.zero}` : '-',
          holder: h, mips: result.solver.mipsSolved, engine: result.solver.engine,
        }));
      }
    }
  } finally {
    await Promise.all([...backends, ...concurrentBackends].map((b) => b.close()));
  }
}

void main();
