/**
 * CPU seconds from Linux's /proc stat files, for the benches that split a process's CPU time
 * (fresh-process-cost.ts by thread, wasm-tiering.ts for child processes). Field numbers follow
 * proc(5), counted from the field after the command name.
 */
import { readFileSync } from 'fs';

const CLOCK_TICKS_PER_S = 100;

/** The fields of a stat file after its `(command)` field. */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of the thread or process whose stat file this is. */
export function ownCpuS(statPath: string): number {
  const fields = statFields(statPath);
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

/** User + system CPU seconds of this process's waited-for children so far (cutime + cstime). */
export function childrenCpuS(): number {
  const fields = statFields('/proc/self/stat');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S;
}
