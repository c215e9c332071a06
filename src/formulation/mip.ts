/**
 * A solver-neutral mixed-integer program: named columns and rows, minimisation. Backends in
 * src/solve/ translate it (HiGHS structured input, javascript-lp-solver models).
 */

export interface MipColumn {
  readonly name: string;
  readonly lower: number;
  readonly upper: number;
  readonly cost: number;
  readonly integer: boolean;
}

export interface MipRow {
  readonly name: string;
  /** -Infinity for none. */
  readonly lower: number;
  /** Infinity for none. */
  readonly upper: number;
  readonly columns: readonly number[];
  readonly coefficients: readonly number[];
}

export interface Mip {
  readonly columns: readonly MipColumn[];
  readonly rows: readonly MipRow[];
}

/** Builds a MIP column by column and row by row, with deterministic names. */
export class MipBuilder {
  private readonly columns: MipColumn[] = [];
  private readonly rows: MipRow[] = [];
  private readonly names = new Set<string>();

  /** Adds a column and returns its index. */
  addColumn(name: string, lower: number, upper: number, options: { cost?: number; integer?: boolean } = {}): number {
    this.claim(name);
    this.columns.push({ name, lower, upper, cost: options.cost ?? 0, integer: options.integer ?? false });
    return this.columns.length - 1;
  }

  /** Adds `lower <= sum(coefficient * column) <= upper`; terms on the same column are summed. */
  addRow(name: string, terms: readonly (readonly [number, number])[], lower: number, upper: number): void {
    this.claim(name);
    const merged = new Map<number, number>();
    for (const [column, coefficient] of terms) {
      if (!Number.isFinite(coefficient)) throw new Error(`row ${name}: coefficient ${coefficient} on ${this.columns[column]?.name}`);
      merged.set(column, (merged.get(column) ?? 0) + coefficient);
    }
    const entries = [...merged.entries()].filter(([, c]) => c !== 0).sort((a, b) => a[0] - b[0]);
    this.rows.push({ name, lower, upper, columns: entries.map((e) => e[0]), coefficients: entries.map((e) => e[1]) });
  }

  /** Lowers the upper bound of a column added earlier (to what its rows can ever require of it). */
  setColumnUpper(column: number, upper: number): void {
    const old = this.columns[column]!;
    this.columns[column] = { ...old, upper: Math.min(old.upper, upper) };
  }

  /** Upper bound of a column added earlier. */
  columnUpper(column: number): number {
    return this.columns[column]!.upper;
  }

  build(): Mip {
    return { columns: [...this.columns], rows: [...this.rows] };
  }

  private claim(name: string): void {
    if (this.names.has(name)) throw new Error(`duplicate MIP name ${name}`);
    this.names.add(name);
  }
}

/** Objective value of `values` (no check of feasibility). */
export const objectiveOf = (mip: Mip, values: readonly number[]): number =>
  mip.columns.reduce((sum, column, i) => sum + column.cost * values[i]!, 0);

/** Largest violation of any bound, row or integrality by `values` (0 when feasible). */
export function maxViolation(mip: Mip, values: readonly number[]): number {
  let worst = 0;
  mip.columns.forEach((column, i) => {
    const v = values[i]!;
    if (!Number.isFinite(v)) { worst = Infinity; return; }
    worst = Math.max(worst, column.lower - v, v - column.upper);
    if (column.integer) worst = Math.max(worst, Math.abs(v - Math.round(v)));
  });
  for (const row of mip.rows) {
    let activity = 0;
    row.columns.forEach((c, k) => { activity += row.coefficients[k]! * values[c]!; });
    const scale = Math.max(1, Math.abs(row.lower === -Infinity ? 0 : row.lower), Math.abs(row.upper === Infinity ? 0 : row.upper));
    worst = Math.max(worst, (row.lower - activity) / scale, (activity - row.upper) / scale);
  }
  return worst;
}
