/**
 * The tables of docs/benchmarks.md are the bench scripts' own output: each script owns the block
 * between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` and, run with `--markdown FILE`,
 * replaces that block with the lines it printed. Everything outside the markers is left as is.
 */
import { readFileSync } from 'fs';
import { writeTextFile } from '../src/io/files';

const opening = (name: string): string => `<!-- bench:${name} -->`;
const closing = (name: string): string => `<!-- /bench:${name} -->`;

/**
 * `text` with the block of section `name` replaced by `lines` (the markers kept, each on its own
 * line). Throws, naming the markers, when either is missing, repeated or out of order.
 */
export function replaceSection(text: string, name: string, lines: readonly string[]): string {
  const open = opening(name);
  const close = closing(name);
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < 0) {
    throw new Error(`section "${name}" not found: the file needs a line ${open} and, below it, a line ${close}`);
  }
  if (text.indexOf(open, start + 1) >= 0 || text.indexOf(close, end + 1) >= 0) throw new Error(`section "${name}" is marked more than once`);
  if (end < start) throw new Error(`section "${name}": ${close} comes before ${open}`);
  return `${text.slice(0, start + open.length)}\n${lines.join('\n')}\n${text.slice(end)}`;
}

/** Replaces section `name` of the Markdown file `file` with `lines` (see replaceSection). */
export function writeSection(file: string, name: string, lines: readonly string[]): void {
  writeTextFile(file, replaceSection(readFileSync(file, 'utf8'), name, lines));
}

/** A bench script's arguments without `--markdown FILE`, and that file if given. */
export function markdownOption(argv: readonly string[]): { readonly markdownFile?: string; readonly args: readonly string[] } {
  const at = argv.indexOf('--markdown');
  if (at < 0) return { args: argv };
  const markdownFile = argv[at + 1];
  if (markdownFile === undefined || markdownFile.startsWith('--')) throw new Error('--markdown needs a file (e.g. --markdown docs/benchmarks.md)');
  return { markdownFile, args: argv.filter((_, i) => i !== at && i !== at + 1) };
}

/**
 * What a bench script prints for its section: each line goes to stdout as it comes, and
 * `finish()` writes them all into section `name` of `markdownFile` when one was given.
 */
export class SectionOutput {
  private readonly lines: string[] = [];

  constructor(private readonly name: string, private readonly markdownFile: string | undefined) {}

  line(text = ''): void {
    this.lines.push(text);
    console.log(text);
  }

  finish(): void {
    if (this.markdownFile !== undefined) writeSection(this.markdownFile, this.name, this.lines);
  }
}
