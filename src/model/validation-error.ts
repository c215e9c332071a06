/**
 * The one typed error for bad input. Each issue names the JSON path of the offending value,
 * so the CLI prints one line per problem (`cluster.sites[1].gpus: must be a positive integer`).
 */
import type { z } from 'zod';

/** One problem with the input, at one JSON path. */
export interface InputIssue {
  /** Dotted JSON path with [index] for arrays, e.g. `cluster.sites[1].gpus`; '' for the root. */
  readonly path: string;
  readonly message: string;
}

/** Thrown for invalid input only; anything else thrown by the library is a bug. */
export class ScenarioValidationError extends Error {
  readonly issues: readonly InputIssue[];
  /** File the input came from, when known. */
  readonly source?: string;

  constructor(issues: readonly InputIssue[], source?: string) {
    super(formatIssues(issues, source));
    this.name = 'ScenarioValidationError';
    this.issues = issues;
    this.source = source;
  }

  /** The same issues, each path prefixed (used to nest a plan inside `plan[3]`). */
  withPrefix(prefix: string, source?: string): ScenarioValidationError {
    return new ScenarioValidationError(
      this.issues.map((issue) => ({ path: joinPath(prefix, issue.path), message: issue.message })),
      source ?? this.source,
    );
  }
}

/** `a` + `b` as a JSON path: `cluster` + `sites[1]` -> `cluster.sites[1]`, `plan` + `[2]` -> `plan[2]`. */
export function joinPath(prefix: string, path: string): string {
  if (prefix === '') return path;
  if (path === '') return prefix;
  return path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

/** Formats a path given as keys and indices: ['cluster', 'sites', 1, 'gpus'] -> `cluster.sites[1].gpus`. */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out = out === '' ? String(segment) : `${out}.${String(segment)}`;
  }
  return out;
}

/** One line per issue: `path: message` (or just the message at the root). */
export function formatIssues(issues: readonly InputIssue[], source?: string): string {
  const where = source ? `${source}: ` : '';
  return issues.map((issue) => `${where}${issue.path === '' ? '' : `${issue.path}: `}${issue.message}`).join('\n');
}

/**
 * All issues on one line, the file named once: `file.json: version: required (1); name: is required (a string)`
 * (batch records, whose error is one line of a results file).
 */
export function formatIssuesOneLine(issues: readonly InputIssue[], source?: string): string {
  const text = issues.map((issue) => `${issue.path === '' ? '' : `${issue.path}: `}${issue.message}`).join('; ').replace(/\s*\n\s*/g, ' ');
  return source ? `${source}: ${text}` : text;
}

/** Converts zod issues into path-named input issues, with readable messages for the common cases. */
export function issuesFromZod(error: z.ZodError, prefix = ''): InputIssue[] {
  return error.issues.map((issue) => ({
    path: joinPath(prefix, formatPath(issue.path)),
    message: describeZodIssue(issue),
  }));
}

function describeZodIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    case 'invalid_type': {
      const expected = EXPECTED_NAMES[issue.expected] ?? issue.expected;
      if (issue.input === undefined) return `is required (${expected})`;
      if (typeof issue.input === 'number' && !Number.isFinite(issue.input)) return 'must be a finite number';
      if (issue.expected === 'int' && typeof issue.input === 'number') return `must be an integer, got ${issue.input}`;
      return `must be ${expected}, got ${describeValue(issue.input)}`;
    }
    case 'invalid_value': {
      // A missing literal or enum value says what is required instead of `got undefined`.
      if (issue.input === undefined) return `required (${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`})`;
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(issue.input)}`;
    }
    case 'invalid_union': {
      // zod's own message is "Invalid input"; when every alternative failed on the type of the value itself, name the alternatives.
      const alternatives = issue.errors.map((branch) => {
        const atValue = branch.find((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value'));
        return atValue ? expectedOf(atValue) : undefined;
      });
      if (alternatives.length === 0 || alternatives.some((a) => a === undefined)) return issue.input === undefined ? 'is required' : issue.message;
      const names = [...new Set(alternatives as string[])];
      const expected = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
      return issue.input === undefined ? `is required (${expected})` : `must be ${expected}, got ${describeValue(issue.input)}`;
    }
    case 'too_small':
    case 'too_big': {
      // zod's defaults ("Too small: expected array to have >=2 items") in the words of the other messages; custom messages stay.
      if (!/^Too (small|big)/.test(issue.message)) return issue.message;
      const bound = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
      const least = issue.code === 'too_small';
      if (issue.origin === 'array') return `must have ${least ? 'at least' : 'at most'} ${bound} item${bound === 1 ? '' : 's'}${Array.isArray(issue.input) ? `, has ${issue.input.length}` : ''}`;
      if (issue.origin === 'string') return least && bound === 1 ? 'must not be empty' : `must have ${least ? 'at least' : 'at most'} ${bound} character${bound === 1 ? '' : 's'}`;
      const relation = least ? (issue.inclusive ? 'at least' : 'more than') : (issue.inclusive ? 'at most' : 'less than');
      return `must be ${relation} ${bound}${typeof issue.input === 'number' ? `, got ${issue.input}` : ''}`;
    }
    default:
      return issue.message;
  }
}

const EXPECTED_NAMES: Record<string, string> = {
  int: 'an integer', number: 'a number', object: 'an object', record: 'an object', string: 'a string', array: 'an array', boolean: 'true or false', tuple: 'an array',
};

/** What one alternative of a union expected at the value itself: `a string`, `1`, `one of "a", "b"`. */
function expectedOf(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code === 'invalid_type') return EXPECTED_NAMES[issue.expected] ?? issue.expected;
  if (issue.code === 'invalid_value') return issue.values.map((v) => JSON.stringify(v)).join(' or ');
  return undefined;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}
