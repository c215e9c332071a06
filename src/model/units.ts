/** Unit conversions, applied once at the edges; inside the model everything is SI (bytes, seconds, FLOP). */

export const BYTES_PER_GIB = 1024 ** 3;
export const BYTES_PER_GB = 1e9;
/** bf16 bytes per element. */
export const BF16_BYTES = 2;
export const FP8_BYTES = 1;
/** Fiber propagation delay, one way, seconds per km (about 4.9 us/km). */
export const FIBER_ONE_WAY_S_PER_KM = 4.9e-6;

export const gbpsToBytesPerS = (gbps: number): number => (gbps * 1e9) / 8;
export const gBpsToBytesPerS = (gBps: number): number => gBps * 1e9;
export const tflopsToFlopPerS = (tflops: number): number => tflops * 1e12;
export const bytesToGiB = (bytes: number): number => bytes / BYTES_PER_GIB;
export const bytesPerSToGbps = (bytesPerS: number): number => (bytesPerS * 8) / 1e9;
