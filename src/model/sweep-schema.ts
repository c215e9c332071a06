/**
 * Sweep spec v1: a base scenario plus the spec paths to vary, expanded by `scaleacross batch`
 * into one scenario per point (src/batch/sweep.ts). The zod schema is the source of truth for
 * schemas/sweep.schema.json.
 */
import { z } from 'zod';

const axisPath = z.string().min(1).describe('A spec path, e.g. `cluster.links[0].bandwidthGbps`, `model`, `cluster.sites[1].gpus`.');

export const sweepSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal(1, { error: 'must be 1 (the only sweep version)' }),
  sweep: z.string().min(1).describe('Name of the sweep: names its charts and its results\' source.'),
  base: z.union([z.string().min(1), z.record(z.string(), z.unknown())])
    .describe('The base scenario: a file path relative to the sweep file, or the scenario inline.'),
  axes: z.record(axisPath, z.array(z.unknown()).min(1, { error: 'needs at least one value' }))
    .optional()
    .describe('Cartesian product: every combination of the listed values, first axis varying slowest.'),
  points: z.array(z.record(axisPath, z.unknown())).min(1, { error: 'needs at least one point' })
    .optional()
    .describe('Explicit list: each point sets the given paths of the base scenario.'),
}).describe('ScaleAcross sweep v1: a base scenario and the spec paths to vary (axes: cartesian product; points: explicit list).');

export type SweepSpec = z.output<typeof sweepSchema>;
