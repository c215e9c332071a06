/**
 * Progress of a batch: on a terminal a cli-progress bar (done/total, failures, rate, ETA);
 * elsewhere a plain line every few seconds or every tenth of the batch.
 */
import { SingleBar } from 'cli-progress';
import { FAILED_STATUSES, type BatchRecord } from '../batch/record';

export interface BatchProgress {
  start(total: number, alreadyDone: number): void;
  record(record: BatchRecord): void;
  stop(): void;
}

const PLAIN_EVERY_S = 5;

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

class Counter {
  total = 0;
  done = 0;
  failed = 0;
  doneThisRun = 0;
  private readonly startedMs = Date.now();

  rate(): number {
    const elapsedS = (Date.now() - this.startedMs) / 1000;
    return elapsedS > 0 ? this.doneThisRun / elapsedS : 0;
  }

  etaS(): number {
    const rate = this.rate();
    return rate > 0 ? (this.total - this.done) / rate : Infinity;
  }

  add(record: BatchRecord): void {
    this.done++;
    this.doneThisRun++;
    if (FAILED_STATUSES.has(record.status)) this.failed++;
  }
}

class TerminalProgress implements BatchProgress {
  private readonly counter = new Counter();
  private readonly bar: SingleBar;

  constructor(stream: NodeJS.WriteStream) {
    this.bar = new SingleBar({
      stream,
      format: 'batch |{bar}| {value}/{total} done | {failed} failed | {rate}/s | ETA {etaText}',
      hideCursor: true,
      clearOnComplete: false,
      barsize: 30,
    });
  }

  start(total: number, alreadyDone: number): void {
    this.counter.total = total;
    this.counter.done = alreadyDone;
    this.bar.start(total, alreadyDone, this.payload());
  }

  record(record: BatchRecord): void {
    this.counter.add(record);
    this.bar.update(this.counter.done, this.payload());
  }

  stop(): void {
    this.bar.stop();
  }

  private payload() {
    return { failed: this.counter.failed, rate: this.counter.rate().toFixed(2), etaText: this.counter.doneThisRun > 0 ? formatDuration(this.counter.etaS()) : '?' };
  }
}

class PlainProgress implements BatchProgress {
  private readonly counter = new Counter();
  private lastMs = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly write: (line: string) => void) {}

  start(total: number, alreadyDone: number): void {
    this.counter.total = total;
    this.counter.done = alreadyDone;
    this.write(`batch: ${total} scenario(s), ${alreadyDone} already done`);
    this.timer = setInterval(() => {
      if (Date.now() - this.lastMs >= PLAIN_EVERY_S * 1000) this.print();
    }, 1000);
    this.timer.unref();
  }

  record(record: BatchRecord): void {
    this.counter.add(record);
    const every = Math.max(1, Math.round(this.counter.total / 10));
    if (this.counter.doneThisRun % every === 0 || Date.now() - this.lastMs >= PLAIN_EVERY_S * 1000) this.print();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private print(): void {
    this.lastMs = Date.now();
    const c = this.counter;
    this.write(`batch: ${c.done}/${c.total} done, ${c.failed} failed, ${c.rate().toFixed(2)}/s, ETA ${c.doneThisRun > 0 ? formatDuration(c.etaS()) : '?'}`);
  }
}

class SilentProgress implements BatchProgress {
  start(): void {}
  record(): void {}
  stop(): void {}
}

/** A bar on a terminal stream, plain lines through `writeLine` otherwise, nothing when quiet. */
export function createBatchProgress(stream: NodeJS.WriteStream | undefined, writeLine: (line: string) => void, quiet: boolean): BatchProgress {
  if (quiet) return new SilentProgress();
  if (stream?.isTTY) return new TerminalProgress(stream);
  return new PlainProgress(writeLine);
}
