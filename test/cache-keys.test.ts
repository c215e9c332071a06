/**
 * The planner's caches are keyed by every field of the input their cached function reads: the
 * compiler rejects a key list that leaves a field out (so a field added to `StageTimePlan` and
 * the like later fails the build until it is keyed), and inputs that differ in any keyed field
 * get different keys.
 */
import { parallelConfigKey } from '../src/diagnose/feasibility-oracle';
import { configTablesKey, EnumerationTables, stageTimeKey } from '../src/formulation/enumeration-tables';
import { fieldKey, type FieldKey } from '../src/formulation/field-key';
import type { ParallelConfig } from '../src/formulation/search-space';
import { SCHEDULES } from '../src/model/plan-schema';
import type { StageTimePlan } from '../src/model/stage-cost';
import { applyFactorValues } from '../src/calibration/apply-profile';
import { FULL_SPACE } from '../src/formulation/search-space';
import { CALIBRATION } from '../src/model/calibration-constants';
import { parseScenario } from '../src/model/scenario';
import { PP_ACROSS_SPACE, PRODUCTION_SPACE } from '../src/solve/plan';
import { enumerateCandidates } from '../src/solve/candidates';
import { loadFixture, readFixture } from './helpers/fixtures';

const base: ParallelConfig = { tp: 2, cp: 1, ep: 1, expertTp: 2, pp: 2, microBatchSeqs: 1, schedule: 'interleaved', virtualStages: 2, recompute: 'none', zero: 1 };

/** `value` with one field changed to another valid value. */
function differingIn(value: ParallelConfig, field: keyof ParallelConfig): ParallelConfig {
  switch (field) {
    case 'schedule': return { ...value, schedule: SCHEDULES.find((s) => s !== value.schedule)! };
    case 'recompute': return { ...value, recompute: value.recompute === 'none' ? 'full' : 'none' };
    case 'recomputeModules': return { ...value, recomputeModules: value.recomputeModules === undefined ? ['core_attn', 'mlp'] : undefined };
    case 'zero': return { ...value, zero: value.zero === 1 ? 2 : 1 };
    case 'rankOrder': return { ...value, rankOrder: value.rankOrder === 'tp-cp-ep-pp-dp' ? 'tp-cp-ep-dp-pp' : 'tp-cp-ep-pp-dp' };
    default: return { ...value, [field]: value[field] * 2 };
  }
}

const keys: [string, FieldKey<never>][] = [
  ['stage times', stageTimeKey], ['configuration tables', configTablesKey], ['feasibility oracle configuration', parallelConfigKey],
];

describe('cache keys', () => {
  it.each(keys)('%s: configurations that differ in any one keyed field get different keys, equal ones the same', (_, key) => {
    const keyOf = key as unknown as (value: ParallelConfig) => string;
    expect(key.fields.length).toBeGreaterThan(0);
    expect(keyOf({ ...base })).toBe(keyOf(base));
    for (const field of key.fields as readonly (keyof ParallelConfig)[]) {
      expect(keyOf(differingIn(base, field))).not.toBe(keyOf(base));
    }
  });

  it('the stage-time key leaves out exactly the fields stage times do not read (dp, schedule, ZeRO are shared)', () => {
    const shared = { ...base, schedule: '1f1b', zero: 3, dp: 64 } as const;
    expect(stageTimeKey(shared)).toBe(stageTimeKey(base));
    expect(configTablesKey(shared)).not.toBe(configTablesKey(base));
  });

  it('the enumeration tables serve one object per key, and another for a configuration that differs in any keyed field', () => {
    const tables = new EnumerationTables(loadFixture('small/three-heterogeneous'));
    const first = tables.forConfig(base);
    const otherSchedule: ParallelConfig = { ...base, schedule: '1f1b' };
    expect(tables.forConfig(otherSchedule)).toBe(first);
    for (const field of configTablesKey.fields) {
      const other = differingIn(base, field as keyof ParallelConfig);
      if (other.pp * other.virtualStages > 8) continue; // the fixture's 8 layers
      expect(tables.forConfig(other)).not.toBe(first);
    }
  });

  it('the compiler rejects a key list that leaves out a field of the input type', () => {
    // Each line compiles only because of its @ts-expect-error: ts-jest fails this file if a line stops being an error.
    // @ts-expect-error 'recompute' is left out
    fieldKey<StageTimePlan>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recomputeModules']);
    // @ts-expect-error 'recomputeModules' (added after the list was first written) is left out
    fieldKey<StageTimePlan>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recompute']);
    // @ts-expect-error a field added to the type later ('precision') is not in today's list
    fieldKey<StageTimePlan & { readonly precision: 'bf16' | 'fp8' }>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recompute', 'recomputeModules', 'rankOrder']);
    // @ts-expect-error 'dp' is not a field of the type
    fieldKey<StageTimePlan>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recompute', 'recomputeModules', 'rankOrder', 'dp']);
    expect(fieldKey<StageTimePlan>()(['tp', 'cp', 'ep', 'expertTp', 'pp', 'virtualStages', 'microBatchSeqs', 'recompute', 'recomputeModules', 'rankOrder']).fields).toEqual(stageTimeKey.fields);
  });

  it('the enumeration tables shared by the searches of one scenario object are rebuilt when a calibration constant changes', () => {
    const spec = readFixture('small/two-sites');
    const scenario = parseScenario(spec);
    const bounds = (s: typeof scenario, space = FULL_SPACE) => enumerateCandidates(s, space).map((c) => [c.config, c.dp, c.quickBoundS]);
    // The same object enumerated again, and in the baselines' spaces, gives what a fresh object gives.
    const first = bounds(scenario);
    expect(bounds(scenario)).toEqual(first);
    expect(bounds(scenario, PRODUCTION_SPACE)).toEqual(bounds(parseScenario(spec), PRODUCTION_SPACE));
    expect(bounds(scenario, PP_ACROSS_SPACE)).toEqual(bounds(parseScenario(spec), PP_ACROSS_SPACE));
    // A profile that changes GEMM efficiency changes stage times: the same object must not be served stale tables.
    const restore = applyFactorValues({ matmulPeakEfficiency: CALIBRATION.matmulPeakEfficiency * 0.5 });
    try {
      const slower = bounds(scenario);
      expect(slower).toEqual(bounds(parseScenario(spec)));
      expect(slower).not.toEqual(first);
    } finally {
      restore();
    }
    expect(bounds(scenario)).toEqual(first);
  });
});
