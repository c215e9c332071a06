/**
 * The library's only file access: reading JSON inputs with errors that name the file and,
 * for malformed JSON, the line and column. Everything else in the library is pure.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ScenarioValidationError } from '../model/validation-error';
import { jsonErrorOffset } from './json-error-position';

/** Reads and parses a JSON file; a missing file or malformed JSON is a {@link ScenarioValidationError}. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'unknown error'})`;
    throw new ScenarioValidationError([{ path: '', message: reason }], file);
  }
  return parseJsonText(text, file);
}

/** Parses JSON text, reporting the line and column of a syntax error. */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const offset = jsonErrorOffset(text);
    let where = '';
    if (offset !== undefined) {
      const before = text.slice(0, offset).split('\n');
      const found = offset < text.length ? `unexpected ${JSON.stringify(text[offset])}` : 'unexpected end of input';
      where = ` at line ${before.length}, column ${before[before.length - 1]!.length + 1}: ${found}`;
    } else {
      where = `: ${(error as Error).message.split('\n')[0]}`;
    }
    throw new ScenarioValidationError([{ path: '', message: `malformed JSON${where}` }], source);
  }
}

/** JSON files directly inside a folder, sorted by name. */
export function listJsonFiles(folder: string): string[] {
  return fs.readdirSync(folder).filter((name) => name.endsWith('.json')).sort().map((name) => path.join(folder, name));
}

/** Reads every calibration row under a folder (each file holds an array of rows). */
export function readJsonArrays(folder: string): unknown[] {
  return listJsonFiles(folder).flatMap((file) => {
    const value = readJsonFile(file);
    return Array.isArray(value) ? value : [value];
  });
}

/** Writes a text file; a failure is a {@link ScenarioValidationError} naming the file. */
export function writeTextFile(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScenarioValidationError([{ path: '', message: `cannot be written (${code === 'ENOENT' ? 'no such folder' : code ?? 'unknown error'})` }], file);
  }
}

/**
 * Reads a plan file: a plan object, or the `--json` output of `plan` (its `.plan` is taken).
 * Returns the plan and the JSON path prefix for errors.
 */
export function readPlanFile(file: string): { readonly plan: unknown; readonly pathPrefix: string } {
  const value = readJsonFile(file);
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'plan' in value && 'status' in value) {
    const plan = (value as { plan: unknown }).plan;
    if (plan === null) throw new ScenarioValidationError([{ path: 'plan', message: 'is null: this plan result found no plan' }], file);
    return { plan, pathPrefix: 'plan' };
  }
  return { plan: value, pathPrefix: 'plan' };
}

/**
 * Writes files into a folder (created if missing), all or nothing: they are written into a staging
 * folder inside it first and moved into place only when every one is written. A path that is not a
 * writable folder is a {@link ScenarioValidationError} naming it.
 */
export function writeFilesToFolder(folder: string, files: readonly { readonly path: string; readonly content: string; readonly executable?: boolean }[]): void {
  const fail = (message: string): never => { throw new ScenarioValidationError([{ path: '', message }], folder); };
  const reason = (error: unknown): string => {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOTDIR' ? 'a path component is a file, not a folder' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? `is not writable (${code})` : `cannot be written (${code ?? 'unknown error'})`;
  };
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') fail(reason(error));
  }
  if (stat !== undefined && !stat.isDirectory()) fail('is a file, not a folder');
  try {
    fs.mkdirSync(folder, { recursive: true });
    fs.accessSync(folder, fs.constants.W_OK);
  } catch (error) {
    fail(reason(error));
  }
  let staging: string | undefined;
  try {
    staging = fs.mkdtempSync(path.join(folder, '.scaleacross-staging-'));
    for (const file of files) fs.writeFileSync(path.join(staging, file.path), file.content, { mode: file.executable ? 0o755 : 0o644 });
    for (const file of files) fs.renameSync(path.join(staging, file.path), path.join(folder, file.path));
  } catch (error) {
    fail(reason(error));
  } finally {
    if (staging !== undefined) fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Fails (naming the path) when `folder` exists and is not a folder; writes nothing. */
export function checkFolderTarget(folder: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(folder);
  } catch {
    return;
  }
  if (!stat.isDirectory()) throw new ScenarioValidationError([{ path: '', message: 'is a file, not a folder' }], folder);
}
