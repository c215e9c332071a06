/**
 * Sharding: `--shard i/n` keeps the scenarios whose id, read as a number, is i-1 modulo n.
 * The id is a content hash, so the split does not depend on the order of the inputs, every
 * scenario is in exactly one shard, and shards are balanced up to hashing noise.
 */

export interface Shard {
  /** 1-based, as written on the command line and as Slurm/Kubernetes array indices are mapped. */
  readonly index: number;
  readonly count: number;
}

/** Parses `i/n` with 1 <= i <= n; returns a message when it is not one. */
export function parseShard(text: string): Shard | string {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) return `--shard must be i/n (e.g. 2/8), got "${text}"`;
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || count > 1_000_000) return `--shard ${text}: n must be between 1 and 1000000`;
  if (index < 1 || index > count) return `--shard ${text}: i must be between 1 and n`;
  return { index, count };
}

/** The 0-based shard of an id (16 hex digits) among `count`. */
export function shardOf(id: string, count: number): number {
  // 48 bits of the hash: exact in a double, uniform modulo any count up to 1e6.
  return Number.parseInt(id.slice(0, 12), 16) % count;
}

export function inShard(id: string, shard: Shard): boolean {
  return shardOf(id, shard.count) === shard.index - 1;
}
