/** Spec paths such as `cluster.links[0].bandwidthGbps`: parsing and setting a value at one. */

export type PathSegment = string | number;

const SEGMENT = /^([A-Za-z_$][\w$]*)((?:\[\d+\])*)$/;

/** Parses `a.b[0].c`; undefined when the text is not a path. */
export function parseSpecPath(text: string): PathSegment[] | undefined {
  const segments: PathSegment[] = [];
  for (const part of text.split('.')) {
    const match = SEGMENT.exec(part);
    if (!match) return undefined;
    segments.push(match[1]!);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  return segments;
}

/** `['cluster', 'links', 0]` -> `cluster.links[0]`. */
export function formatSegments(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}

const describeKind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`);

/**
 * Sets `value` at `segments` inside `root` (mutated). Every container on the way must exist
 * in `root`; array indices must be in range; the last key of an object may be new (the
 * scenario schema then decides whether it is allowed). Returns a message when the path does
 * not fit `root`.
 */
export function setAtPath(root: unknown, segments: readonly PathSegment[], value: unknown): string | undefined {
  let current: unknown = root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    const here = formatSegments(segments.slice(0, i)) || 'the scenario';
    if (typeof segment === 'number') {
      if (!Array.isArray(current)) return `${here} is ${describeKind(current)}, not an array, in the base scenario`;
      if (segment >= current.length) return `index ${segment} is out of range: ${here} has ${current.length} element${current.length === 1 ? '' : 's'} in the base scenario`;
      if (last) current[segment] = value;
      else current = current[segment];
    } else {
      if (current === null || typeof current !== 'object' || Array.isArray(current)) return `${here} is ${describeKind(current)}, not an object, in the base scenario`;
      const object = current as Record<string, unknown>;
      if (last) object[segment] = value;
      else if (!(segment in object)) return `${formatSegments(segments.slice(0, i + 1))} does not exist in the base scenario`;
      else current = object[segment];
    }
  }
  return undefined;
}
