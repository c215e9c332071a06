/**
 * Checks of training.precision, training.fp8Recipe and training.fp8ParamGather (with training.masterWeights) against the sites' GPUs: fp8 needs fp8
 * tensor cores (at most twice the bf16 rate), the mxfp8 recipe GPUs that apply MX block scales.
 */
import type { InputIssue } from './validation-error';
import type { Site } from './scenario';
import type { ScenarioSpec } from './scenario-schema';

export function checkPrecision(spec: ScenarioSpec, sites: readonly Site[], issues: InputIssue[]): void {
  const recipe = spec.training.fp8Recipe;
  if (spec.training.precision !== 'fp8') {
    if (recipe !== undefined) issues.push({ path: 'training.fp8Recipe', message: `${recipe} applies to precision fp8 only (training.precision is ${spec.training.precision})` });
    if (spec.training.fp8ParamGather === true) issues.push({ path: 'training.fp8ParamGather', message: `applies to precision fp8 only (training.precision is ${spec.training.precision})` });
    return;
  }
  // With fp8 parameter gather the linear weights have no bf16 copy: the master copy is their only
  // high-precision value, so it cannot be left out or kept as remainders of a bf16 weight.
  if (spec.training.fp8ParamGather === true && spec.training.masterWeights !== 'fp32') {
    issues.push({ path: 'training.masterWeights', message: `${spec.training.masterWeights} needs the bf16 weights that training.fp8ParamGather drops (the fp32 master copy is then the weights' only high-precision value); use fp32 or turn fp8ParamGather off` });
  }
  for (const site of sites) {
    if (recipe === 'mxfp8' && site.gpu.peakFp8Tflops !== undefined && !site.gpu.mxfp8) {
      issues.push({ path: `cluster.sites[${site.index}]`, message: `${site.gpu.name} has no MX block-scaling tensor cores (training.fp8Recipe is mxfp8; B200 and GB200 have them, or set gpu.mxfp8)` });
    }
    if (site.gpu.peakFp8Tflops === undefined) {
      issues.push({ path: `cluster.sites[${site.index}]`, message: `${site.gpu.name} has no fp8 tensor cores (training.precision is fp8)` });
    } else if (site.gpu.peakFp8Tflops > 2.01 * site.gpu.peakBf16Tflops) {
      // Dense fp8 tensor cores run at most twice the bf16 rate (NVIDIA H100/H200/B200, AMD MI300X datasheets;
      // 1% for rounded figures such as H100's 1979 and 989); docs/cost-model.md §1 (why MFU stays at most 1).
      issues.push({ path: `cluster.sites[${site.index}].gpu.peakFp8Tflops`, message: `${site.gpu.peakFp8Tflops} dense fp8 TFLOP/s is more than twice the ${site.gpu.peakBf16Tflops} bf16 (no GPU has that; sparse figures are 2x dense)` });
    }
  }
}
