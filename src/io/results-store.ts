/**
 * Batch results on disk: an NDJSON file appended one record per line, each line written in
 * one call and fsync'ed before the next, so a kill at any moment leaves whole lines plus at
 * most one unterminated tail, which reading drops (and, on resume, truncates away).
 */
import * as fs from 'fs';
import type { BatchRecord } from '../batch/record';
import { ScenarioValidationError } from '../model/validation-error';

export interface ResultsFile {
  readonly records: BatchRecord[];
  /** Bytes of an unterminated last line that were ignored (and truncated when repairing). */
  readonly droppedTailBytes: number;
}

/**
 * Reads a results file (missing: no records, as a batch resumes before its first result, or with
 * `mustExist` an input error: a part given to merge). Every complete line must be a record; an
 * unterminated last line is a write cut short by a kill and is ignored; with `repair` it is
 * also truncated from the file so that appending continues on a line boundary.
 */
export function readResultsFile(file: string, repair: boolean, mustExist = false): ResultsFile {
  let buffer: Buffer;
  try {
    buffer = fs.readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !mustExist) return { records: [], droppedTailBytes: 0 };
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'unknown error'})`;
    throw new ScenarioValidationError([{ path: '', message: reason }], file);
  }
  const end = buffer.lastIndexOf(0x0a) + 1;
  const droppedTailBytes = buffer.length - end;
  if (droppedTailBytes > 0 && repair) fs.truncateSync(file, end);
  const records: BatchRecord[] = [];
  buffer.subarray(0, end).toString('utf8').split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ScenarioValidationError([{ path: `line ${i + 1}`, message: 'malformed JSON: not a batch result line' }], file);
    }
    const r = value as Partial<BatchRecord> | null;
    if (!r || typeof r !== 'object' || typeof r.id !== 'string' || typeof r.ordinal !== 'number' || typeof r.status !== 'string' || typeof r.batchKey !== 'string') {
      throw new ScenarioValidationError([{ path: `line ${i + 1}`, message: 'not a batch result (needs id, ordinal, status, batchKey)' }], file);
    }
    records.push(value as BatchRecord);
  });
  return { records, droppedTailBytes };
}

/** True when the file exists and is not empty. */
export function hasContent(file: string): boolean {
  try {
    return fs.statSync(file).size > 0;
  } catch {
    return false;
  }
}

/** Appends records to a results file, one durable line each. */
export class ResultsAppender {
  private fd: number | undefined;

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'a');
  }

  append(record: BatchRecord): void {
    if (this.fd === undefined) throw new Error(`results file ${this.file} is closed`);
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    let written = 0;
    while (written < bytes.length) written += fs.writeSync(this.fd, bytes, written, bytes.length - written);
    fs.fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Writes a whole file atomically (temporary file, then rename). */
export function writeFileAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

/** A whole results file at once (merge output). */
export function writeResultsFile(file: string, records: readonly BatchRecord[]): void {
  writeFileAtomically(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}
