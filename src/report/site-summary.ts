/** What each site hosts, in words shared by the HTML site map and the plain-text one. */
import type { SiteUsage } from '../model/evaluate';

/** [0,1,2,5,6] -> "0-2, 5-6". */
export function compactRanges(values: readonly number[]): string {
  if (values.length === 0) return '';
  const runs: string[] = [];
  let start = values[0]!;
  for (let i = 1; i <= values.length; i++) {
    if (i === values.length || values[i] !== values[i - 1]! + 1) {
      const end = values[i - 1]!;
      runs.push(start === end ? `${start}` : `${start}-${end}`);
      start = values[i]!;
    }
  }
  return runs.join(', ');
}

/** "stages 0-15 x 64 replicas", or "idle". */
export function hostedSummary(site: SiteUsage): string {
  if (site.stages.length === 0) return 'idle';
  const byReplicas = new Map<number, number[]>();
  for (const s of site.stages) byReplicas.set(s.replicas, [...(byReplicas.get(s.replicas) ?? []), s.stage]);
  return [...byReplicas.entries()]
    .map(([replicas, stages]) => `${stages.length === 1 ? 'stage' : 'stages'} ${compactRanges(stages)} x ${replicas} ${replicas === 1 ? 'replica' : 'replicas'}`)
    .join('; ');
}
