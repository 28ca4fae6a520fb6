import { IMAGE_KERNEL_WASM_BASE64 } from "./image-kernel-wasm";
import { growMemoryTo } from "./memory";

/** Past each image in memory, room for the one value that a pair of outputs at an odd row end reads beyond it. */
const SLACK_BYTES = 16;

const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(IMAGE_KERNEL_WASM_BASE64, "base64")), {});
const memory = instance.exports.memory as WebAssembly.Memory;
type BoxPass = (src: number, dst: number, width: number, height: number, radius: number, scale: number) => void;
const kernel = instance.exports as unknown as {
  rows: BoxPass;
  columns: BoxPass;
  convolveRows: (src: number, dst: number, padded: number, kernel: number, taps: number, width: number, height: number) => void;
  convolveColumns: (src: number, dst: number, kernel: number, taps: number, width: number, height: number) => void;
  gradients: (src: number, gx: number, gy: number, width: number, height: number) => void;
  hessian: (src: number, out: number, width: number, height: number, norm: number) => void;
  normaliseContrast: (src: number, dst: number, sums: number, squares: number, width: number, height: number, radius: number, minVariance: number) => void;
};

/** Byte offsets of `count` image-sized regions (the first holds the input) and of scratch space after them. */
function regions(width: number, height: number, count: number, scratchBytes = 0): { at: number[]; scratch: number } {
  const size = (width * height * 4 + SLACK_BYTES + 15) & ~15;
  const needed = size * count + scratchBytes;
  growMemoryTo(memory, needed);
  return { at: Array.from({ length: count }, (_, i) => i * size), scratch: size * count };
}

function copyIn(data: Float32Array, at: number): void {
  new Float32Array(memory.buffer, at, data.length).set(data);
}

function copyOut(at: number, length: number): Float32Array {
  return new Float32Array(memory.buffer.slice(at, at + length * 4));
}

/**
 * A cascade of box filters, one of each radius in turn, each a horizontal then a vertical running-sum
 * pass with clamped edges; the result is a new array.
 */
export function boxFilterCascade(data: Float32Array, width: number, height: number, radii: readonly number[]): Float32Array {
  const { at: [image, pass] } = regions(width, height, 2);
  copyIn(data, image);
  for (const radius of radii) {
    const scale = 1 / (2 * radius + 1);
    kernel.rows(image, pass, width, height, radius, scale);
    kernel.columns(pass, image, width, height, radius, scale);
  }
  return copyOut(image, data.length);
}

/** Separable convolution with an odd-length `taps` kernel, rows then columns, edges clamped. */
export function convolveSeparable(data: Float32Array, width: number, height: number, taps: Float32Array): Float32Array {
  const paddedBytes = (Math.max(width, height) + taps.length + 1) * 4;
  const { at: [image, pass], scratch } = regions(width, height, 2, paddedBytes + taps.length * 4);
  copyIn(data, image);
  copyIn(taps, scratch + paddedBytes);
  kernel.convolveRows(image, pass, scratch, scratch + paddedBytes, taps.length, width, height);
  kernel.convolveColumns(pass, image, scratch + paddedBytes, taps.length, width, height);
  return copyOut(image, data.length);
}

/** Central-difference gradients, clamped at the border. */
export function centralGradients(data: Float32Array, width: number, height: number): { gx: Float32Array; gy: Float32Array } {
  const { at: [image, gx, gy] } = regions(width, height, 3);
  copyIn(data, image);
  kernel.gradients(image, gx, gy, width, height);
  return { gx: copyOut(gx, data.length), gy: copyOut(gy, data.length) };
}

/** Determinant of the Hessian (central second differences) times `norm`, zero on the one-pixel border. */
export function hessianDeterminant(data: Float32Array, width: number, height: number, norm: number): Float32Array {
  const { at: [image, out] } = regions(width, height, 2);
  copyIn(data, image);
  kernel.hessian(image, out, width, height, norm);
  return copyOut(out, data.length);
}

/**
 * Local contrast normalisation over a (2 radius + 1)-wide window clamped to the image:
 * (v - mean) / sqrt(std^2 + minVariance), limited to [-3, 3].
 */
export function normaliseLocalContrast(data: Float32Array, width: number, height: number, radius: number, minVariance: number): Float32Array {
  const tableBytes = (width + 1) * (height + 1) * 8;
  const { at: [image, out], scratch } = regions(width, height, 2, 2 * tableBytes);
  copyIn(data, image);
  kernel.normaliseContrast(image, out, scratch, scratch + tableBytes, width, height, radius, minVariance);
  return copyOut(out, data.length);
}
