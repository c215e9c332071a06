/**
 * JSON Schemas generated from the zod source of truth, for editors (`"$schema"`) and for
 * validators in other languages. `npm run schemas` writes them to schemas/; a test keeps the
 * committed files in sync.
 */
import { z } from 'zod';
import { calibrationProfileSchema, calibrationRunsSchema } from './calibration-profile-schema';
import { planSchema } from './plan-schema';
import { scenarioSchema } from './scenario-schema';
import { sweepSchema } from './sweep-schema';

const BASE_URL = 'https://scaleacross.dev/schemas';

function toSchema(schema: z.ZodType, id: string, title: string): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...generated, $id: `${BASE_URL}/${id}`, title };
}

/** File name in schemas/ -> JSON Schema object. */
export function jsonSchemas(): Record<string, Record<string, unknown>> {
  return {
    'scenario.schema.json': toSchema(scenarioSchema, 'scenario.schema.json', 'ScaleAcross scenario v1'),
    'plan.schema.json': toSchema(planSchema, 'plan.schema.json', 'ScaleAcross parallel plan'),
    'sweep.schema.json': toSchema(sweepSchema, 'sweep.schema.json', 'ScaleAcross sweep v1'),
    'plans.schema.json': toSchema(z.union([planSchema, z.array(planSchema)]), 'plans.schema.json', 'One ScaleAcross plan or an array of plans'),
    'calibration-runs.schema.json': toSchema(calibrationRunsSchema, 'calibration-runs.schema.json', 'ScaleAcross measured runs for calibrate'),
    'calibration-profile.schema.json': toSchema(calibrationProfileSchema, 'calibration-profile.schema.json', 'ScaleAcross calibration profile v1'),
  };
}
