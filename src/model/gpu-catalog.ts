/**
 * Built-in GPU catalog. Figures are vendor datasheet values (dense, no sparsity); memory is
 * what the driver exposes, in GiB. A scenario may override any GPU with a custom `gpu` block.
 */

/** The hardware facts the cost model needs about one GPU type. */
export interface GpuSpec {
  /** Catalog or user name, e.g. `H100-SXM`. */
  readonly name: string;
  /** Peak dense bf16 tensor-core throughput, TFLOP/s. */
  readonly peakBf16Tflops: number;
  /** Peak dense fp8 throughput, TFLOP/s; absent when the GPU has no fp8 tensor cores. */
  readonly peakFp8Tflops?: number;
  /** Tensor cores that apply MX block scales (32-element blocks) natively: Blackwell; absent on Hopper and Ampere. */
  readonly mxfp8?: boolean;
  /** Device memory the job can address, GiB. */
  readonly memoryGiB: number;
  /** HBM bandwidth, GB/s (drives the optimizer step). */
  readonly hbmGBps: number;
  /** Scale-up (NVLink) bandwidth per GPU per direction, GB/s. */
  readonly scaleUpGBps: number;
  /** GPUs in one scale-up (NVLink) domain: 8 for HGX boards, 72 for GB200 NVL72. */
  readonly scaleUpDomainGpus: number;
  /** Scale-out NIC bandwidth per GPU, Gb/s. */
  readonly nicGbps: number;
}

/** Datasheet figures; sources: NVIDIA A100/H100/H200/B200/GB200 datasheets, DeepSeek-V3 paper (H800). */
export const GPU_CATALOG: Readonly<Record<string, GpuSpec>> = {
  'A100-80GB': { name: 'A100-80GB', peakBf16Tflops: 312, memoryGiB: 80, hbmGBps: 2039, scaleUpGBps: 300, scaleUpDomainGpus: 8, nicGbps: 200 },
  'H100-SXM': { name: 'H100-SXM', peakBf16Tflops: 989, peakFp8Tflops: 1979, memoryGiB: 80, hbmGBps: 3350, scaleUpGBps: 450, scaleUpDomainGpus: 8, nicGbps: 400 },
  H800: { name: 'H800', peakBf16Tflops: 989, peakFp8Tflops: 1979, memoryGiB: 80, hbmGBps: 3350, scaleUpGBps: 200, scaleUpDomainGpus: 8, nicGbps: 400 },
  H200: { name: 'H200', peakBf16Tflops: 989, peakFp8Tflops: 1979, memoryGiB: 140, hbmGBps: 4800, scaleUpGBps: 450, scaleUpDomainGpus: 8, nicGbps: 400 },
  B200: { name: 'B200', peakBf16Tflops: 2250, peakFp8Tflops: 4500, mxfp8: true, memoryGiB: 179, hbmGBps: 8000, scaleUpGBps: 900, scaleUpDomainGpus: 8, nicGbps: 400 },
  GB200: { name: 'GB200', peakBf16Tflops: 2500, peakFp8Tflops: 5000, mxfp8: true, memoryGiB: 184, hbmGBps: 8000, scaleUpGBps: 900, scaleUpDomainGpus: 72, nicGbps: 800 },
};

/** Names accepted in `cluster.sites[i].gpuType`. */
export const GPU_TYPE_NAMES: readonly string[] = Object.keys(GPU_CATALOG);
