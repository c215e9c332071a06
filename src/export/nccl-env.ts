/**
 * `nccl.env`: the NCCL environment the plan's cross-site network settings imply (one VAR=value a
 * line; `#` lines are notes), and what the environment cannot express. NCCL reads its
 * environment once per process and applies it to every peer, so per-link settings become the
 * setting of the most demanding link, with the rest as notes. Ranges as documented in NCCL's
 * environment-variable reference: NCCL_IB_QPS_PER_CONNECTION 1-128; NCCL_SOCKET_NTHREADS 1-16,
 * NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD at most 64. Pure.
 */
import { linkSettings } from '../model/cross-site';
import { evaluateLayout } from '../model/evaluate';
import type { PlanLayout } from '../model/placement';
import type { Scenario } from '../model/scenario';
import { oneLine } from './shell';

const MAX_QPS_PER_CONNECTION = 128;
const MAX_SOCKET_THREADS = 16;
const MAX_SOCKETS = 64;

/** Socket threads and sockets per thread whose product is `flows` TCP connections per peer pair (clamped to NCCL's 64). */
export function socketSettings(flows: number): { threads: number; socketsPerThread: number } {
  const threads = Math.min(MAX_SOCKET_THREADS, Math.max(1, flows));
  const socketsPerThread = Math.max(1, Math.min(Math.floor(MAX_SOCKETS / threads), Math.ceil(flows / threads)));
  return { threads, socketsPerThread };
}

export function ncclEnv(scenario: Scenario, layout: PlanLayout): string {
  const settings = linkSettings(scenario, layout.plan);
  const usage = evaluateLayout(scenario, layout).predicted.links;
  const loaded = scenario.links
    .map((link, i) => ({ label: oneLine(`${scenario.sites[link.siteA]!.name}<->${scenario.sites[link.siteB]!.name}`), settings: settings[i]!, bytes: usage[i]!.bytesPerIteration }))
    .filter((l) => l.bytes > 0);
  const lines = [
    `# NCCL environment for ${oneLine(scenario.name)}, from the plan's cross-site network settings.`,
    '# Sourced by every launch script of this bundle (set -a; source nccl.env). One VAR=value a line.',
  ];
  if (loaded.length === 0) {
    lines.push('# The plan sends nothing across sites: no cross-site setting applies; NCCL defaults are kept.');
    return `${lines.join('\n')}\n`;
  }
  lines.push('#', '# Cross-site links the plan uses:');
  for (const l of loaded) {
    const s = l.settings;
    lines.push(`#   ${l.label}: ${s.transport}, ${s.flowsPerGpuPair} flow(s) per GPU pair, ${s.collectives} collectives, gradient compression ${s.gradientCompression}`);
  }
  const notes: string[] = [];
  const roce = loaded.filter((l) => l.settings.transport === 'roce');
  const tcp = loaded.filter((l) => l.settings.transport === 'tcp');
  const active: string[] = [];
  const socketLines = (flows: number): string[] => {
    const { threads, socketsPerThread } = socketSettings(flows);
    if (threads * socketsPerThread < flows) notes.push(`${flows} TCP flows per GPU pair exceed NCCL's ${MAX_SOCKETS} sockets per connection; set to ${threads * socketsPerThread}`);
    return [`NCCL_SOCKET_NTHREADS=${threads}`, `NCCL_NSOCKS_PERTHREAD=${socketsPerThread}`];
  };
  if (roce.length > 0) {
    const flows = Math.max(...roce.map((l) => l.settings.flowsPerGpuPair));
    const qps = Math.min(MAX_QPS_PER_CONNECTION, flows);
    active.push(`NCCL_IB_QPS_PER_CONNECTION=${qps}`);
    if (qps < flows) notes.push(`${flows} flows per GPU pair exceed NCCL's ${MAX_QPS_PER_CONNECTION} queue pairs per connection; set to ${qps}`);
    if (new Set(roce.map((l) => l.settings.flowsPerGpuPair)).size > 1) {
      notes.push(`the RoCE links want different queue pairs per connection (${roce.map((l) => `${l.label} ${l.settings.flowsPerGpuPair}`).join(', ')}); NCCL takes one value per process, so the largest is set`);
    }
    notes.push('NCCL_IB_QPS_PER_CONNECTION applies to every InfiniBand/RoCE connection of the process, inside the sites too');
    if (tcp.length > 0) {
      const flows = Math.max(...tcp.map((l) => l.settings.flowsPerGpuPair));
      notes.push(`${tcp.map((l) => l.label).join(', ')} should carry TCP (${flows} flow(s) per GPU pair), the others RoCE: NCCL picks one network for all peers of a process, so this file keeps RoCE; route the TCP link's traffic in the network, or if every cross-site byte must go over sockets use: NCCL_IB_DISABLE=1 NCCL_NET=Socket ${socketLines(flows).join(' ')}`);
    }
  } else {
    const flows = Math.max(...tcp.map((l) => l.settings.flowsPerGpuPair));
    active.push('NCCL_IB_DISABLE=1', 'NCCL_NET=Socket', ...socketLines(flows));
    notes.push('NCCL_NET=Socket moves every inter-node connection onto TCP sockets, inside the sites too (NCCL cannot choose the transport per peer); if the sites have InfiniBand/RoCE fabrics the plan assumes they keep them: then remove NCCL_IB_DISABLE and NCCL_NET and let the network carry the cross-site traffic over TCP');
    notes.push('fill in NCCL_SOCKET_IFNAME with the interface that reaches the other sites (e.g. NCCL_SOCKET_IFNAME==eth0)');
  }
  const hierarchical = loaded.filter((l) => l.settings.collectives === 'hierarchical');
  if (hierarchical.length > 0) {
    notes.push(`hierarchical collectives on ${hierarchical.map((l) => l.label).join(', ')} (reduce inside each site, then across) are not an NCCL setting: the framework's process groups make them (one data-parallel group per site, then one across sites); NCCL's own rings and trees span all ranks of a communicator`);
  }
  const flat = loaded.filter((l) => l.settings.collectives === 'flat');
  if (flat.length > 0) notes.push(`flat collectives on ${flat.map((l) => l.label).join(', ')}: one data-parallel communicator across the sites, NCCL's default`);
  const compressed = loaded.filter((l) => l.settings.gradientCompression !== 'none');
  if (compressed.length > 0) {
    notes.push(`fp8 gradient compression on ${compressed.map((l) => l.label).join(', ')} is not an NCCL setting (NCCL reduces the buffers it is given); the framework must cast the cross-site gradients, or cross-site gradient traffic doubles against the prediction`);
  }
  lines.push('', ...active, '', '# What the environment cannot set, or sets for more than the plan says:');
  for (const note of notes) lines.push(`# - ${note}`);
  return `${lines.join('\n')}\n`;
}
