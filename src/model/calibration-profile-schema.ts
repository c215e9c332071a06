/**
 * The two documents of `scaleacross calibrate` (zod source of truth; JSON Schemas in schemas/):
 * the measured runs it reads, and the calibration profile it writes, which `evaluate`, `plan`
 * and a scenario's `"calibration"` field apply (docs/cost-model.md §7, user calibration).
 */
import { z } from 'zod';
import { CALIBRATION } from './calibration-constants';

const positive = (what = 'a finite positive number') => z.number().positive({ error: (issue) => `must be ${what}, got ${String(issue.input)}` });

/** What was measured for one run: exactly one speed figure, optionally the memory per GPU. */
export const measuredRunSchema = z.strictObject({
  iterationTimeS: positive().optional().describe('Measured seconds per iteration (steady state, the median of many iterations)'),
  tokensPerSecondPerGpu: positive().optional().describe('Measured tokens per second per GPU'),
  mfu: positive().max(1, { error: (issue) => `must be at most 1 (a fraction of the dense bf16 peak), got ${String(issue.input)}` }).optional()
    .describe('Measured model FLOPs utilisation as this project counts it (causal attention, no recomputation, dense bf16 peak)'),
  memoryGiBPerGpu: positive().optional().describe('Measured peak memory per GPU, GiB (reported against the model; not fitted)'),
}).superRefine((value, ctx) => {
  const given = (['iterationTimeS', 'tokensPerSecondPerGpu', 'mfu'] as const).filter((k) => value[k] !== undefined);
  if (given.length !== 1) {
    ctx.addIssue({ code: 'custom', message: given.length === 0 ? 'needs one of iterationTimeS, tokensPerSecondPerGpu, mfu' : `gives ${given.join(' and ')}: give exactly one of iterationTimeS, tokensPerSecondPerGpu, mfu` });
  }
});

const scenarioRef = z.union([z.string().min(1), z.record(z.string(), z.unknown())])
  .describe('A scenario file (relative to the runs file) or a scenario inline');

/** One measured training run: the job (scenario and plan) and what it measured. */
export const calibrationRunSchema = z.strictObject({
  scenario: scenarioRef,
  plan: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).describe('A plan file (relative to the runs file; a plan or the --json output of plan) or a plan inline'),
  measured: measuredRunSchema,
  label: z.string().optional().describe('Name of the run in the output (default: its position and scenario name)'),
  note: z.string().optional().describe('Free text (where the figure comes from); ignored'),
});

/** One bandwidth measurement (nccl-tests bus bandwidth, iperf) between two sites, or inside one site when both names are that site. */
export const calibrationLinkSchema = z.strictObject({
  link: z.tuple([z.string().min(1), z.string().min(1)]).describe('Two site names: a cross-site link, or the same site twice for its scale-out fabric'),
  measured: z.strictObject({
    busBandwidthGBps: positive().describe('Achieved bus bandwidth, GB/s: per GPU for a site (nccl-tests busbw), aggregate over the link for a cross-site link'),
    messageBytes: z.number().int({ error: 'must be a positive integer (bytes)' }).positive({ error: (issue) => `must be a positive integer (bytes), got ${String(issue.input)}` }),
  }),
  scenario: scenarioRef.optional().describe('The scenario whose sites are meant (default: the first run whose scenario has both sites)'),
  label: z.string().optional(),
  note: z.string().optional(),
});

/** A runs file: an array of runs and link measurements (or NDJSON, one per line; or `{ runs: [...] }`). */
export const calibrationRunsSchema = z.union([
  z.array(z.union([calibrationRunSchema, calibrationLinkSchema])),
  z.strictObject({ $schema: z.string().optional(), note: z.string().optional(), runs: z.array(z.union([calibrationRunSchema, calibrationLinkSchema])) }),
]).describe('Measured runs for scaleacross calibrate');

export type CalibrationRunSpec = z.output<typeof calibrationRunSchema>;
export type CalibrationLinkSpec = z.output<typeof calibrationLinkSchema>;

const factorSchema = z.strictObject({
  value: z.number().describe('The fitted value (the prior when not identified)'),
  prior: z.number().describe('The committed value the fit started from and was pulled towards'),
  identified: z.boolean().describe('Whether the runs were sensitive to it; a factor that is not identified stays at its prior'),
  uncertainty: z.number().nonnegative().nullable().describe('One standard deviation of the value, from the curvature of the fit objective (null when not identified)'),
  leaveOneOutSpread: z.number().nonnegative().nullable().describe('Largest relative change of the value when one run is left out of the fit (null with fewer than 3 runs)'),
  range: z.tuple([z.number(), z.number()]).describe('The physical range the fit kept it in'),
});

const relative = z.number().describe('(predicted - measured) / measured');

/** The document `calibrate --out` writes. */
export const calibrationProfileSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal(1, { error: 'must be 1 (the only calibration profile version)' }),
  kind: z.literal('scaleacross-calibration', { error: 'must be "scaleacross-calibration"' }),
  created: z.string().describe('ISO 8601 time the profile was fitted'),
  runsFile: z.string().describe('The runs file it was fitted on'),
  scope: z.string().describe('What the factors apply to (one set for the whole cluster in this version)'),
  fit: z.strictObject({
    runs: z.number().int().nonnegative(),
    links: z.number().int().nonnegative(),
    objective: z.string(),
    priorWeight: z.number().nonnegative().describe('Weight of the prior (1: moving a factor 10% costs as much as one run 10% off)'),
    residualSigma: z.number().nonnegative().describe('Assumed spread of a run\'s log error: the fitted residuals\' RMS, at least 0.02'),
  }),
  factors: z.record(z.string(), factorSchema),
  runs: z.array(z.strictObject({
    source: z.string(),
    metric: z.enum(['iterationTimeS', 'tokensPerSecondPerGpu', 'mfu']),
    measured: z.number(),
    predictedBefore: z.number(),
    predictedAfter: z.number(),
    errorBefore: relative,
    errorAfter: relative,
    leaveOneOutError: relative.nullable().describe('Error when the fit leaves this run out (null with fewer than 3 runs)'),
    memoryGiBPerGpu: z.strictObject({ measured: z.number(), predicted: z.number(), error: relative }).optional(),
    fits: z.boolean().describe('Whether the memory model lets the plan fit'),
  })),
  links: z.array(z.strictObject({
    source: z.string(),
    factor: z.string(),
    nominalGBps: z.number(),
    busBandwidthGBps: z.number(),
    messageBytes: z.number(),
    measuredEfficiency: z.number(),
  })),
}).superRefine((profile, ctx) => {
  for (const [name, factor] of Object.entries(profile.factors)) {
    if (!(name in CALIBRATION)) ctx.addIssue({ code: 'custom', path: ['factors', name], message: `unknown factor (known: ${Object.keys(CALIBRATION).join(', ')})` });
    else if (!(factor.value >= factor.range[0] && factor.value <= factor.range[1])) ctx.addIssue({ code: 'custom', path: ['factors', name, 'value'], message: `must be within its range [${factor.range[0]}, ${factor.range[1]}], got ${factor.value}` });
  }
}).describe('ScaleAcross calibration profile: cost-model factors fitted to measured runs');

export type CalibrationProfile = z.output<typeof calibrationProfileSchema>;
