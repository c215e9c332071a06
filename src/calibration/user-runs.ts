/**
 * Turns the entries of a runs file (already read and shape-checked by src/io/calibration-files)
 * into runs and link measurements the fit can use: scenarios parsed, plans evaluated, link
 * measurements mapped to the factor they measure. Every problem is reported at once, each
 * naming its JSON path.
 */
import type { CalibrationLinkSpec, CalibrationRunSpec } from '../model/calibration-profile-schema';
import { evaluate } from '../model/evaluate';
import { parseScenario, type Scenario } from '../model/scenario';
import { gbpsToBytesPerS } from '../model/units';
import { ScenarioValidationError, joinPath, type InputIssue } from '../model/validation-error';
import type { LinkMeasurement, RunMetric, UserRun } from './user-fit';

interface Resolved { readonly value: unknown; readonly file?: string }

export type RunEntry =
  | { readonly kind: 'run'; readonly path: string; readonly spec: CalibrationRunSpec; readonly scenario: Resolved; readonly plan: Resolved }
  | { readonly kind: 'link'; readonly path: string; readonly spec: CalibrationLinkSpec; readonly scenario?: Resolved };

/**
 * Scenario errors name the scenario file when it is one (`runs[1].scenario: s.json: model.layers: ...`),
 * else the inline path (`runs[1].scenario.model.layers: ...`); plan errors likewise.
 */
function nested(error: ScenarioValidationError, at: string, resolved: Resolved): InputIssue[] {
  return error.issues.map((issue) => resolved.file
    ? { path: at, message: `${resolved.file}: ${issue.path === '' ? '' : `${issue.path}: `}${issue.message}` }
    : { path: joinPath(at, issue.path), message: issue.message });
}

/** Throws one {@link ScenarioValidationError} with `earlier` issues (the file's shape checks) and every problem found here. */
export function buildUserRuns(entries: readonly RunEntry[], source: string, earlier: readonly InputIssue[] = []): { runs: UserRun[]; links: LinkMeasurement[] } {
  const issues: InputIssue[] = [...earlier];
  const runs: UserRun[] = [];
  const scenarios: Scenario[] = [];
  const parse = (resolved: Resolved, at: string): Scenario | undefined => {
    try {
      return parseScenario(resolved.value, resolved.file);
    } catch (error) {
      if (!(error instanceof ScenarioValidationError)) throw error;
      issues.push(...nested(error, at, resolved));
      return undefined;
    }
  };
  for (const entry of entries) {
    if (entry.kind !== 'run') continue;
    const scenario = parse(entry.scenario, `${entry.path}.scenario`);
    if (!scenario) continue;
    scenarios.push(scenario);
    try {
      evaluate(scenario, entry.plan.value, 'plan');
    } catch (error) {
      if (!(error instanceof ScenarioValidationError)) throw error;
      // The model names the plan's paths from `plan` (`plan.tp`).
      const relative = error.withPrefix('').issues.map((issue) => ({ path: issue.path.replace(/^plan\.?/, ''), message: issue.message }));
      issues.push(...nested(new ScenarioValidationError(relative), `${entry.path}.plan`, entry.plan));
      continue;
    }
    const measured = entry.spec.measured;
    const metric: RunMetric = measured.iterationTimeS !== undefined ? 'iterationTimeS' : measured.tokensPerSecondPerGpu !== undefined ? 'tokensPerSecondPerGpu' : 'mfu';
    runs.push({
      source: entry.spec.label ?? `${entry.path} ${scenario.name}`,
      scenario, plan: entry.plan.value, metric, measured: measured[metric]!,
      ...(measured.memoryGiBPerGpu !== undefined ? { memoryGiBPerGpu: measured.memoryGiBPerGpu } : {}),
    });
  }
  const links: LinkMeasurement[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'link') continue;
    const [a, b] = entry.spec.link;
    let scenario: Scenario | undefined;
    if (entry.scenario) {
      scenario = parse(entry.scenario, `${entry.path}.scenario`);
      if (!scenario) continue;
    } else {
      scenario = scenarios.find((s) => s.sites.some((site) => site.name === a) && s.sites.some((site) => site.name === b));
    }
    if (!scenario) {
      const known = [...new Set(scenarios.flatMap((s) => s.sites.map((site) => site.name)))];
      issues.push({ path: `${entry.path}.link`, message: `no run's scenario has both sites '${a}' and '${b}' (sites: ${known.join(', ') || 'none'}); give the link a "scenario"` });
      continue;
    }
    const siteA = scenario.sites.find((s) => s.name === a);
    const siteB = scenario.sites.find((s) => s.name === b);
    if (!siteA || !siteB) {
      const missing = !siteA ? [0, a] as const : [1, b] as const;
      issues.push({ path: `${entry.path}.link[${missing[0]}]`, message: `unknown site '${missing[1]}' (sites of ${scenario.name}: ${scenario.sites.map((s) => s.name).join(', ')})` });
      continue;
    }
    const label = entry.spec.label ?? `${entry.path} ${a}${a === b ? '' : `<->${b}`}`;
    const { busBandwidthGBps, messageBytes } = entry.spec.measured;
    if (siteA === siteB) {
      links.push({ source: label, factor: 'scaleOutBusEfficiency', nominalGBps: gbpsToBytesPerS(siteA.gpu.nicGbps) / 1e9, busBandwidthGBps, messageBytes });
      continue;
    }
    const link = scenario.links.find((l) => (l.siteA === siteA.index && l.siteB === siteB.index) || (l.siteA === siteB.index && l.siteB === siteA.index));
    if (!link) {
      issues.push({ path: `${entry.path}.link`, message: `${scenario.name} has no direct link between '${a}' and '${b}'` });
      continue;
    }
    links.push({ source: label, factor: 'crossSiteLinkEfficiency', nominalGBps: link.bandwidthBytesPerS / 1e9, busBandwidthGBps, messageBytes });
  }
  // One line per problem, in the order of the file.
  const order = (p: string) => Number(/^runs\[(\d+)\]/.exec(p)?.[1] ?? -1);
  if (issues.length > 0) throw new ScenarioValidationError([...issues].sort((a, b) => order(a.path) - order(b.path)), source);
  return { runs, links };
}
