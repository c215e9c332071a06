/**
 * Per-layer quantities of a decoder-only transformer: parameters, FLOPs per token and
 * activation bytes. Formulas: docs/cost-model.md §1 (Narayanan et al. SC'21, Korthikanti et al. 2022).
 * One file per family; this one gathers them for callers that read several.
 */
export * from './transformer-params';
export * from './transformer-flops';
export * from './transformer-activations';
