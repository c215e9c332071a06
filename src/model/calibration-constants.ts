/**
 * The calibrated constants (fitted by scripts/fit-calibration.ts on all 60 rows at once: the
 * constants of src/calibration/fit.ts FITTED_PARAMETERS) of the cost model: one set for every scenario and every row of the
 * calibration table (docs/calibration.md), no per-row values. Changing any of them must be
 * followed by `npm run calibration` and a look at the errors.
 */
export const CALIBRATION = {
  /** Best achievable fraction of peak for a large bf16 GEMM. */
  matmulPeakEfficiency: 0.72,
  /** GEMM rows (tokens per GPU per microbatch) at which efficiency is half its best. */
  matmulHalfRows: 1,
  /** GEMM columns (hidden / tp) at which efficiency is half its best. */
  matmulHalfColumns: 69,
  /** Best achievable fraction of the fp8 peak for a large fp8 GEMM. */
  fp8MatmulPeakEfficiency: 0.7776,
  /** Best achievable fraction of the bf16 peak for a fused attention kernel (flash attention), forward and backward together. */
  fusedAttentionPeakEfficiency: 0.3041,
  /** Bytes moved per element cast to fp8: read bf16 (2), write fp8 and its transpose (1 + 1), amax fused; set by hand, not fitted. */
  fp8CastBytesPerElement: 4,
  /** Bytes memory-bound kernels (norms, activation functions, residual adds, dropout) move per token per layer per hidden unit, forward. */
  elementwiseBytesPerHidden: 194,
  /** Bytes moved per attention score element (per token, head and key) forward by unfused softmax, mask and dropout. */
  scoreBytesPerElement: 9,
  /**
   * Bytes HBM moves per local token and attention-context element at each ring-attention step
   * after the first (context parallelism), forward: the step's partial output and its softmax
   * statistics merged into the running output (online-softmax correction; read the step's bf16
   * output, read and write an fp32 accumulator: 10 by that count); set by hand, not fitted
   * (docs/cost-model.md §2, §7).
   */
  ringStepBytesPerElement: 10,
  /** Fraction of NVLink bandwidth a NCCL collective achieves (bus bandwidth / link rate). */
  scaleUpBusEfficiency: 0.8,
  /** Fraction of NIC bandwidth a NCCL collective achieves across nodes. */
  scaleOutBusEfficiency: 0.85,
  /** Fraction of a cross-site link's capacity usable by training traffic. */
  crossSiteLinkEfficiency: 0.9,
  /** Per ring step latency inside a node, seconds. */
  scaleUpStepLatencyS: 5e-6,
  /** Per ring step latency between nodes of a site, seconds. */
  scaleOutStepLatencyS: 12e-6,
  /**
   * Fixed forward microseconds per local routed expert per MoE layer and microbatch (backward twice
   * that): the per-expert kernels of a grouped expert MLP (quantisation, GEMM tails, activation)
   * that do not shrink with the expert's tokens.
   */
  expertKernelOverheadUs: 67.925,
  /** Share of tensor-parallel communication left exposed when it is overlapped with GEMMs. */
  tpOverlapResidual: 0.4125,
  /** Share of overlapped data-parallel gradient sync left exposed however long the window (NCCL kernels taking SMs and HBM bandwidth from the compute they overlap; docs/cost-model.md §3). */
  dpOverlapResidual: 0.25,
} as const;

/** Network-layer constants (docs/cost-model.md §4). */
export const NETWORK = {
  /** Largest TCP window a tuned host uses, bytes. */
  tcpWindowBytes: 16 * 1024 * 1024,
  /** TCP maximum segment size with jumbo frames, bytes. */
  tcpMssBytes: 8948,
  /** RoCE MTU, bytes. */
  roceMtuBytes: 4096,
} as const;
