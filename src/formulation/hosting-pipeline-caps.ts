/**
 * Pipeline caps of a class hosting (docs/formulation.md §4, step 3(d), condition (v)): the
 * whole-replica program of hosting-integrality.ts, asked whether the hosting has a placement
 * whose every replica finishes its pipeline phase under a cap.
 *
 * The ring-pattern bound charges a hosting its pipeline bound (the busiest replica's, wherever it
 * sits) and the worst exposed sync its class rings give (`syncS`). A placement faster than the
 * caller's threshold `enoughS` therefore has every replica's pipeline phase below
 * capS = enoughS - syncS - optimizer. A replica of layout l running m microbatches takes at least
 * the span of eq. 5.11 at l's stage times with each crossing its latency and the link step of its
 * route's busiest link (`queuedSpanFloorS`): a link's step is at least the sends of every replica
 * crossing it (F5), n x sendBytes over its best bytes/s for n replica crossings. So a (layout,
 * count) whose span floor reaches capS even on an otherwise idle link is no replica of such a
 * placement, and one that reaches it at n crossings caps each link of its route at n - 1 crossings
 * in all whenever a replica uses it. The capital fact: when the sites' GPUs force some replicas to
 * cut their pipelines late (a site hosting a class in its prefix must hold a replica whose first
 * part reaches it) and the links are shared, these caps leave no placement (the 4-site DeepSeek-V3
 * planner-scaling row: docs/formulation.md §4).
 *
 * The span floor is a longest path through the schedule's op order with every send on a link's
 * queue weighing the link step, so it is convex and non-decreasing in the step: three spans per
 * (layout, count), at steps 0, a middle and a high one, give lines under it (a secant on one side
 * of a point is at most the slope there on the other side), and the caps come from those lines.
 * Spans are computed as needed and cached for the search; past a budget of work a (layout, count)
 * gets no cap (weaker, still a bound).
 */
import type { ChainBoundary } from '../model/pipeline-round-trip';
import { queuedSpanFloorS } from '../model/pipeline-span-floor';
import type { ConfigCoefficients } from './coefficients';
import { addClassSiteTerms, addHostingSiteRows, INTEGRAL_CHECK_TIME_LIMIT_S, layoutIsHosted, type IntegerFeasibility } from './hosting-integrality';
import { MipBuilder, type Mip } from './mip';

/**
 * Capped programs one search may hand to the solver, and its time for them in all, ms; past
 * either a hosting passes unasked. Counts first, so that the bound follows the machine's load as
 * little as it can: the 4-site DeepSeek-V3 row's bound holder asks 852, about 1 ms each.
 */
export const PIPELINE_CAP_CHECKS_PER_SEARCH = 2000;
export const PIPELINE_CAP_CHECKS_MAX_MS = 3000;

/** Span work (stages x microbatches per span) one search may spend on the caps; past it no cap is drawn. */
export const PIPELINE_CAP_SPAN_BUDGET = 2_000_000;

/** Lower lines of a (layout, count)'s span floor as a function of the link step, from up to three spans. */
interface SpanLines {
  readonly zeroS: number;
  /** The span at `midStepS` and `highStepS`, computed as needed (NaN: not yet; -Infinity: budget spent). */
  midS: number;
  highS: number;
}

/** The capped program's verdict maker for one candidate; see {@link pipelineCapProgram}. */
export interface PipelineCaps {
  /** The layouts the programs choose from (those that fit memory for some microbatch count). */
  readonly layouts: ConfigCoefficients['layouts'];
  /**
   * The most replica crossings link `link` may carry while a replica of `layouts[k]` at m
   * microbatches uses it and its pipeline phase stays under capS (any load past it puts that
   * replica's span floor at capS or more); Infinity when no load the link can carry binds.
   */
  readonly linkCap: (k: number, m: number, link: number, capS: number) => number;
  /**
   * The whole-replica program of `hosting` (site bit mask per class) with every replica's
   * pipeline phase below `capS`, or 'none' when no (layout, count) the hosting allows stays under
   * it (no placement does).
   */
  readonly program: (hosting: ArrayLike<number>, capS: number) => Mip | 'none';
}

/**
 * Whether the caps can act on candidate `c`: every layout that fits memory has a span floor (1F1B
 * and ZB-H1, one chunk per stage) and one of them is split across sites (no crossing, no link cap).
 */
export function pipelineCapsApply(c: ConfigCoefficients): boolean {
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.length > 0);
  return c.linkBytesPerS.length > 0 && usable.every((l) => l.roundTrip?.schedule !== undefined) && usable.some((l) => l.crossings > 0);
}

/**
 * The pipeline caps of candidate `c` on sites of `siteGpus` GPUs, whose stage j belongs to class
 * `classOfStage[j]`; undefined where they cannot act ({@link pipelineCapsApply}).
 */
export function pipelineCaps(c: ConfigCoefficients, siteGpus: readonly number[], classOfStage: ArrayLike<number>, classCount: number): PipelineCaps | undefined {
  if (!pipelineCapsApply(c)) return undefined;
  const usable = c.layouts.filter((l) => l.fittingMicrobatches.length > 0);
  const linkCount = c.linkBytesPerS.length;
  // The most replica crossings a link can carry: every replica over it, each as often as any layout crosses it.
  const mostCrossings = Array.from({ length: linkCount }, (_, link) => c.dp * Math.max(0, ...usable.map((l) => l.crossingsPerLink.get(link) ?? 0)));
  const slowestBytesPerS = Math.min(...c.linkBytesPerS);
  const mostOnAnyLink = Math.max(1, ...mostCrossings);
  const highStepS = (mostOnAnyLink * c.sendBytes) / slowestBytesPerS;
  // The links' even share of the replicas, one below the high point at most (one link: dp - 1),
  // so that the lines have two secants; whole crossings, where the span is taken at a real load.
  const midStepS = (Math.max(1, Math.min(Math.ceil(c.dp / linkCount), mostOnAnyLink - 1)) * c.sendBytes) / slowestBytesPerS;
  let budget = PIPELINE_CAP_SPAN_BUDGET;
  const p = c.config.pp;
  const lines = usable.map(() => new Map<number, SpanLines>());
  const countsOf = usable.map((l) => [...l.fittingMicrobatches].sort((a, b) => a - b));

  /** The span floor of usable layout k at m microbatches with every crossing's link step at `stepS` (-Infinity past the budget). */
  const spanAt = (k: number, m: number, stepS: number): number => {
    if (budget <= 0) return -Infinity;
    budget -= p * m;
    const { layout, roundTrip } = usable[k]!;
    const hops: ChainBoundary[] = [];
    roundTrip!.crossS.forEach((latencyS, q) => { if (layout.stageSite[q] !== layout.stageSite[q + 1]) hops.push({ virtualStage: q, latencyS, stepS }); });
    return queuedSpanFloorS(roundTrip, hops, m);
  };
  const linesOf = (k: number, m: number): SpanLines => {
    let found = lines[k]!.get(m);
    if (!found) { found = { zeroS: spanAt(k, m, 0), midS: NaN, highS: NaN }; lines[k]!.set(m, found); }
    return found;
  };
  /**
   * A lower bound on the span floor of (k, m) at link step `stepS`, from the spans computed so
   * far (convex and non-decreasing in the step: at s below the middle point the line through it
   * with the right secant's slope, above it the line with the left secant's slope, past the high
   * point the line through it with that right secant's slope again).
   */
  const lowerS = (s: SpanLines, stepS: number): number => {
    let lower = s.zeroS;
    if (!(s.midS > -Infinity) || !(s.highS > -Infinity) || !(midStepS > 0) || !(highStepS > midStepS)) return lower;
    const leftSlope = (s.midS - s.zeroS) / midStepS;
    const rightSlope = (s.highS - s.midS) / (highStepS - midStepS);
    if (stepS <= midStepS) lower = Math.max(lower, s.midS - rightSlope * (midStepS - stepS));
    else lower = Math.max(lower, s.midS + leftSlope * (stepS - midStepS));
    if (stepS >= highStepS) lower = Math.max(lower, s.highS + rightSlope * (stepS - highStepS));
    return lower;
  };
  /**
   * The most crossings link `link` may carry while a replica of (k, m) uses it and stays under
   * capS: the largest n with the lower lines at n crossings' step below capS (below the
   * layout's own crossings, it is not allowed), or Infinity when no load the link can carry binds.
   */
  const capCache = new Map<string, number>();
  const capOn = (k: number, m: number, link: number, capS: number): number => {
    const key = `${k}|${m}|${link}|${capS}`;
    let cap = capCache.get(key);
    if (cap === undefined) { cap = linkCapOf(k, m, link, capS); capCache.set(key, cap); }
    return cap;
  };
  const linkCapOf = (k: number, m: number, link: number, capS: number): number => {
    const s = linesOf(k, m);
    const stepOf = (n: number) => (n * c.sendBytes) / c.linkBytesPerS[link]!;
    const most = mostCrossings[link]!;
    if (Number.isNaN(s.highS)) s.highS = spanAt(k, m, highStepS);
    if (!(s.highS > -Infinity) || s.highS < capS && stepOf(most) <= highStepS) return Infinity;
    if (Number.isNaN(s.midS)) s.midS = spanAt(k, m, midStepS);
    if (lowerS(s, stepOf(most)) < capS) return Infinity;
    let low = 0;
    let high = most;
    // lowerS at low stays below capS; at high it does not.
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (lowerS(s, stepOf(mid)) < capS) low = mid; else high = mid;
    }
    return low;
  };

  const program = (hosting: ArrayLike<number>, capS: number): Mip | 'none' => {
    const builder = new MipBuilder();
    const replicas: [number, number][] = [];
    const microbatches: [number, number][] = [];
    const gpusBySite = siteGpus.map((): [number, number][] => []);
    const replicasByClassSite = new Map<number, [number, number][]>();
    const crossingsOnLink = Array.from({ length: linkCount }, (): [number, number][] => []);
    const capped: { readonly used: number; readonly link: number; readonly cap: number }[] = [];
    usable.forEach((l, k) => {
      const stageSite = l.layout.stageSite;
      if (!layoutIsHosted(stageSite, hosting, classOfStage)) return;
      for (const m of countsOf[k]!) {
        // The span floor bounds every replica of at least m microbatches: larger counts fare no better.
        if (linesOf(k, m).zeroS >= capS) break;
        const caps: [number, number][] = [];
        let allowed = true;
        for (const [link, own] of l.crossingsPerLink) {
          const cap = capOn(k, m, link, capS);
          if (cap < own) { allowed = false; break; }
          if (Number.isFinite(cap)) caps.push([link, cap]);
        }
        if (!allowed) continue;
        // Its replicas cross each capped link at least once each: no more of them than the cap.
        const most = Math.min(c.dp, ...caps.map(([link, cap]) => Math.floor(cap / l.crossingsPerLink.get(link)!)));
        const x = builder.addColumn(`replicasOnLayout${k}At${m}`, 0, most, { integer: true });
        replicas.push([x, 1]);
        microbatches.push([x, m]);
        for (const [site, gpus] of l.gpusPerSite) gpusBySite[site]!.push([x, gpus]);
        for (const [link, own] of l.crossingsPerLink) crossingsOnLink[link]!.push([x, own]);
        addClassSiteTerms(replicasByClassSite, stageSite, classOfStage, siteGpus.length, x);
        if (caps.length === 0) continue;
        // used = 1 when any replica runs (k, m): then each of its links carries at most its cap.
        const used = builder.addColumn(`layout${k}At${m}Used`, 0, 1, { integer: true });
        builder.addRow(`layout${k}At${m}UsedWhenRun`, [[x, 1], [used, -Math.max(1, most)]], -Infinity, 0);
        for (const [link, cap] of caps) capped.push({ used, link, cap });
      }
    });
    if (replicas.length === 0) return 'none';
    builder.addRow('replicas', replicas, c.dp, c.dp);
    builder.addRow('microbatches', microbatches, c.totalMicrobatches, c.totalMicrobatches);
    gpusBySite.forEach((terms, site) => builder.addRow(`gpusOfSite${site}`, terms, -Infinity, siteGpus[site]!));
    if (!addHostingSiteRows(builder, replicasByClassSite, hosting, classCount, siteGpus.length)) return 'none';
    // Crossings on the link + (most - cap) x used <= most: at most cap while (k, m) runs.
    capped.forEach(({ used, link, cap }, r) => {
      const most = mostCrossings[link]!;
      builder.addRow(`linkCap${r}`, [...crossingsOnLink[link]!, [used, most - cap]], -Infinity, most);
    });
    return builder.build();
  };
  return { layouts: usable, linkCap: capOn, program };
}

/**
 * A test of a complete hosting under a cap on every replica's pipeline phase: 'infeasible' only
 * when no (layout, count) stays under the cap or `solver` proves the capped program has no
 * solution; 'feasible' when it has one (then the hosting's uncapped program has one too);
 * 'unknown' without caps for the candidate, when the solver did not answer in time, or once this
 * test has solved PIPELINE_CAP_CHECKS_PER_SEARCH programs or spent PIPELINE_CAP_CHECKS_MAX_MS. Answers are cached per hosting and cap.
 */
export function pipelineCapCheck(
  c: ConfigCoefficients, siteGpus: readonly number[], classOfStage: ArrayLike<number>, classCount: number, solver: IntegerFeasibility,
): (hosting: ArrayLike<number>, capS: number) => 'feasible' | 'infeasible' | 'unknown' {
  const caps = pipelineCaps(c, siteGpus, classOfStage, classCount);
  const cache = new Map<string, 'feasible' | 'infeasible' | 'unknown'>();
  let solved = 0;
  let spentMs = 0;
  return (hosting, capS) => {
    if (!caps || !Number.isFinite(capS)) return 'unknown';
    const key = `${Array.prototype.join.call(hosting, ',')}|${capS}`;
    let answer = cache.get(key);
    if (answer === undefined) {
      if (spentMs >= PIPELINE_CAP_CHECKS_MAX_MS) return 'unknown';
      const started = Date.now();
      const mip = caps.program(hosting, capS);
      // Only the programs handed to the solver count against its budget ('none' needs no solve).
      if (mip !== 'none' && solved >= PIPELINE_CAP_CHECKS_PER_SEARCH) return 'unknown';
      if (mip !== 'none') solved++;
      answer = mip === 'none' ? 'infeasible' : solver(mip, INTEGRAL_CHECK_TIME_LIMIT_S);
      spentMs += Date.now() - started;
      cache.set(key, answer);
    }
    return answer;
  };
}
