/**
 * javascript-lp-solver, loaded the same way under Node and in the explorer's bundle: Node's
 * `require` resolves its CommonJS build (the solver object itself), the browser bundle its ES
 * module build, whose only export is that object as `default`.
 */
export interface LpSolver {
  Solve(model: unknown): Record<string, number | boolean | undefined>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const loaded = require('javascript-lp-solver') as LpSolver | { default: LpSolver };

export const lpSolver: LpSolver = 'Solve' in loaded ? loaded : loaded.default;
