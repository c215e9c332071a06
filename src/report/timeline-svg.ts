/**
 * The pipeline timeline (Gantt) of one replica for one iteration's pipeline phase: a lane per
 * stage with every forward, backward (and ZB-H1 weight-gradient) op of every microbatch, the
 * idle bubbles between them, and a lane per cross-site boundary with the sends drawn on the
 * link they cross.
 */
import type { GroupTimeline } from '../model/pipeline-timeline';
import type { Scenario } from '../model/scenario';
import { escapeHtml, formatSeconds, px } from './html-escape';

const KIND_COLOR = { forward: '#4e79a7', backward: '#59a14f', weight: '#76b7b2' } as const;
const CHUNK_SHADE = ['#4e79a7', '#7aa6d6', '#2f4f73', '#a0c4ea'];
/** Above this many microbatches, bars are drawn without labels. */
export const LABELLED_MICROBATCHES = 64;

interface Lane { readonly kind: 'stage' | 'link'; readonly index: number; readonly y: number; readonly label: string }

export function timelineSvg(scenario: Scenario, group: GroupTimeline): string {
  const { timeline, pipeline, hops } = group;
  const p = timeline.stages;
  const width = 1100;
  const labelWidth = 190;
  const plotWidth = width - labelWidth - 20;
  const stageHeight = p <= 16 ? 22 : p <= 48 ? 12 : 6;
  const linkHeight = Math.max(10, Math.round(stageHeight * 0.8));
  const span = Math.max(timeline.spanS, 1e-12);
  const x = (t: number): number => labelWidth + (t / span) * plotWidth;
  const siteName = (site: number): string => scenario.sites[site]!.name;

  // Lanes: stages in order, each boundary's link lane under the stage that sends forward across it.
  const hopsAfterStage = new Map<number, number[]>();
  hops.forEach((hop, i) => {
    const sender = hop.virtualStage % p;
    hopsAfterStage.set(sender, [...(hopsAfterStage.get(sender) ?? []), i]);
  });
  const lanes: Lane[] = [];
  const linkLaneOfHop = new Map<number, number>();
  let y = 30;
  const linkLanes: { index: number; y: number; label: string; hops: number[] }[] = [];
  for (let j = 0; j < p; j++) {
    lanes.push({ kind: 'stage', index: j, y, label: `stage ${j} · ${siteName(pipeline.stageSite[j]!)}` });
    y += stageHeight + 3;
    const crossing = hopsAfterStage.get(j);
    if (crossing) {
      const first = hops[crossing[0]!]!;
      const route = first.links.map((l) => scenario.links[l]!.label).join(' + ');
      const wrap = j === p - 1 ? ' (chunk wrap)' : '';
      const lane = { index: linkLanes.length, y, label: `link ${route}${wrap}`, hops: crossing };
      linkLanes.push(lane);
      for (const h of crossing) linkLaneOfHop.set(h, lane.index);
      lanes.push({ kind: 'link', index: lane.index, y, label: lane.label });
      y += linkHeight + 3;
    }
  }
  const axisY = y + 4;
  const height = axisY + 44;
  const labelled = timeline.microbatches <= LABELLED_MICROBATCHES;
  const stageY = (j: number): number => lanes.find((l) => l.kind === 'stage' && l.index === j)!.y;

  const laneBackgrounds = lanes.map((lane) => lane.kind === 'stage'
    ? `<g class="stage-lane" data-stage="${lane.index}" data-site="${escapeHtml(siteName(pipeline.stageSite[lane.index]!))}"><text x="${labelWidth - 8}" y="${px(lane.y + stageHeight / 2 + 4)}" text-anchor="end" class="lane-label">${escapeHtml(lane.label)}</text></g>`
    : `<g class="link-lane" data-link-lane="${lane.index}"><rect x="${labelWidth}" y="${lane.y}" width="${plotWidth}" height="${linkHeight}" fill="#fdf0f0"/><text x="${labelWidth - 8}" y="${px(lane.y + linkHeight / 2 + 4)}" text-anchor="end" class="lane-label link-text">${escapeHtml(lane.label)}</text></g>`);

  // Idle gaps per stage.
  const bubbles: string[] = [];
  for (let j = 0; j < p; j++) {
    const ops = timeline.ops.filter((op) => op.stage === j).sort((a, b) => a.startS - b.startS);
    let at = 0;
    for (const op of [...ops, { startS: timeline.spanS, endS: timeline.spanS }]) {
      if (op.startS - at > span * 1e-6) {
        bubbles.push(`<rect class="bubble" data-stage="${j}" x="${px(x(at))}" y="${stageY(j)}" width="${px(x(op.startS) - x(at))}" height="${stageHeight}" fill="url(#bubble-hatch)"><title>${escapeHtml(`stage ${j} idle ${formatSeconds(op.startS - at)}`)}</title></rect>`);
      }
      at = Math.max(at, op.endS);
    }
  }

  const ops = timeline.ops.map((op) => {
    const color = op.kind === 'forward' ? CHUNK_SHADE[op.chunk % CHUNK_SHADE.length]! : KIND_COLOR[op.kind];
    const x0 = x(op.startS);
    const w = Math.max(0.5, x(op.endS) - x0);
    const top = stageY(op.stage);
    const label = labelled && w >= 14 && stageHeight >= 12
      ? `<text x="${px(x0 + w / 2)}" y="${px(top + stageHeight / 2 + 4)}" text-anchor="middle" class="op-label">${op.microbatch}</text>` : '';
    return `<rect class="op" data-kind="${op.kind}" data-stage="${op.stage}" data-chunk="${op.chunk}" data-microbatch="${op.microbatch}" x="${px(x0)}" y="${top}" width="${px(w)}" height="${stageHeight}" fill="${color}" stroke="#fff" stroke-width="${labelled ? 0.5 : 0}"><title>${escapeHtml(`stage ${op.stage} chunk ${op.chunk} ${op.kind} microbatch ${op.microbatch}: ${formatSeconds(op.startS)} to ${formatSeconds(op.endS)}`)}</title></rect>${label}`;
  });

  const sends = timeline.sends.map((send) => {
    const lane = linkLanes[linkLaneOfHop.get(send.hop)!]!;
    const top = lane.y + (send.direction === 'forward' ? 0 : linkHeight / 2);
    const color = send.direction === 'forward' ? '#e15759' : '#f1a340';
    return `<g class="send" data-hop="${send.hop}" data-direction="${send.direction}" data-microbatch="${send.microbatch}">`
      + `<rect x="${px(x(send.startS))}" y="${px(top)}" width="${px(Math.max(0.5, x(send.endS) - x(send.startS)))}" height="${px(linkHeight / 2)}" fill="${color}"/>`
      + `<line x1="${px(x(send.endS))}" x2="${px(x(send.arriveS))}" y1="${px(top + linkHeight / 4)}" y2="${px(top + linkHeight / 4)}" stroke="${color}" stroke-width="1"/>`
      + `<title>${escapeHtml(`${send.direction} send of microbatch ${send.microbatch} on ${lane.label}: ${formatSeconds(send.startS)} to ${formatSeconds(send.arriveS)} (arrival)`)}</title></g>`;
  });

  const ticks: string[] = [];
  const step = niceStep(span / 8);
  for (let t = 0; t <= span * 1.0001; t += step) {
    ticks.push(`<line x1="${px(x(t))}" x2="${px(x(t))}" y1="26" y2="${axisY}" stroke="#ddd"/><text x="${px(x(t))}" y="${axisY + 16}" text-anchor="middle" class="small">${escapeHtml(formatSeconds(t))}</text>`);
  }
  const defs = '<defs><pattern id="bubble-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f3f3f3"/><line x1="0" y1="0" x2="0" y2="6" stroke="#ccc" stroke-width="2"/></pattern></defs>';
  const title = `<text x="${labelWidth}" y="16" class="small">${escapeHtml(`replica group ${group.group}: ${timeline.microbatches} microbatches x ${p} stages${timeline.virtualStages > 1 ? ` x ${timeline.virtualStages} chunks` : ''}, ${timeline.schedule}; span ${formatSeconds(timeline.spanS)}`)}</text>`;
  return `<svg id="pipeline-timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-stages="${p}" data-microbatches="${timeline.microbatches}" data-virtual-stages="${timeline.virtualStages}" data-link-lanes="${linkLanes.length}" data-span-s="${timeline.spanS}">${defs}${title}${ticks.join('')}${laneBackgrounds.join('')}${bubbles.join('')}${ops.join('')}${sends.join('')}<text x="${labelWidth}" y="${axisY + 36}" class="small">time into the iteration's pipeline phase</text></svg>`;
}

function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}
