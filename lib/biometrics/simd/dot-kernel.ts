import { DOT_KERNEL_WASM_BASE64 } from "./dot-kernel-wasm";
import { growMemoryTo } from "./memory";
import { nativeKernels, nativeVariant, nearestLayout, type NearestLayout } from "./native-kernels";

const INT32_MIN = -(2 ** 31);

const kernelModule = new WebAssembly.Module(Buffer.from(DOT_KERNEL_WASM_BASE64, "base64"));
const instance = new WebAssembly.Instance(kernelModule, {});
const memory = instance.exports.memory as WebAssembly.Memory;
const widen = instance.exports.widen as (src: number, n: number, dst: number) => void;
const matrix = instance.exports.matrix as (pa: number, na: number, pb: number, nb: number, dims: number, out: number) => void;
const wasmNearest = instance.exports.nearest as (
  pa: number, na: number, frames: number, pb: number, nb: number, nbPad: number, dims: number, out: number, scratch: number,
) => void;

/**
 * `nearest` in native code where the engine runs its native kernels (native-kernels.ts), else in WebAssembly; a and b
 * laid out as the kernel in use reads them (`nearestLayout`: `widenedA`, and `layColumnPairs` by the quad layer).
 */
function nearest(pa: number, na: number, frames: number, pb: number, nb: number, nbPad: number, dims: number, out: number, scratch: number): void {
  const variant = nativeVariant();
  if (variant !== null) nativeKernels!.nearest(variant, memory.buffer, pa, na, frames, pb, nb, nbPad, dims, out);
  else wasmNearest(pa, na, frames, pb, nb, nbPad, dims, out, scratch);
}

/** What `layColumnPairs` needs of a kernel instance. */
interface PairLayer {
  memory: WebAssembly.Memory;
  layPairs: (src: number, rows: number, dims: number, dst: number) => void;
}
const main: PairLayer = { memory, layPairs: instance.exports.layPairs as PairLayer["layPairs"] };
/** The native kernels' "quads" layout of b, laid out in the main instance's memory. */
const quadLayer: PairLayer = { memory, layPairs: (src, rows, dims, dst) => nativeKernels!.layQuads(memory.buffer, src, rows, dims, dst) };

const align16 = (bytes: number) => (bytes + 15) & ~15;
const roundUp4 = (count: number) => (count + 3) & ~3;
const roundUp16 = (count: number) => (count + 15) & ~15;

/**
 * Blocks of rows of `dims` int8, each laid out column pair by column pair as int16 (`rowsPadded` × dims values, padding
 * rows zero) one after another from byte `at` of a kernel's memory, as `nearest` and `secondBest` read a matrix: pair p
 * of row j of block k at at + (k × rowsPadded × dims + (p × rowsPadded + j) × 2) × 2. The blocks are staged as int8
 * from byte `stage` on (as many bytes as the blocks padded), and laid out by the kernel (`layPairs`; the quad layer lays
 * the native "quads" layout, which fits in the same room, instead).
 */
function layColumnPairs(kernel: PairLayer, blocks: readonly Int8Array[], dims: number, rowsPadded: number, at: number, stage: number): void {
  const padded = rowsPadded * dims;
  growMemoryTo(kernel.memory, stage + blocks.length * padded);
  const bytes = new Int8Array(kernel.memory.buffer);
  blocks.forEach((block, k) => {
    bytes.set(block, stage + k * padded);
    bytes.fill(0, stage + k * padded + block.length, stage + (k + 1) * padded);
    kernel.layPairs(stage + k * padded, rowsPadded, dims, at + 2 * k * padded);
  });
}

/**
 * The block sets of `a` that `blockNeighbours` widened into kernel memory (each one template's descriptor frames: a probe
 * image compared with image after image, or a session's few probe images compared with each enrolled image in turn),
 * one after another from byte 0, and the end of the last. They are loaded again only for other arrays (templates are
 * never changed in place) or after `load` wrote over them; past KEPT_A_SETS sets or KEPT_A_BYTES bytes (staging
 * included) the list starts again empty. `b` is laid out from KEPT_A_BYTES on.
 */
let keptA: { blocks: readonly Int8Array[]; at: number; layout: NearestLayout }[] = [];
let keptAEnd = 0;
const KEPT_A_SETS = 8;
const KEPT_A_BYTES = 4 << 20;
/** The blocks of `b` last laid out (at `at`, `padB` rows): an enrolled image compared with each probe image in turn. */
let keptB: { blocks: readonly Int8Array[]; at: number; padB: number; layout: NearestLayout } | null = null;

/**
 * Where `aBlocks` lie in kernel memory as the `nearest` kernel in use reads them (widened to int16, or as uint8 each
 * value + 128 for the "quads" layout: its byte with the top bit flipped): from the kept sets, or placed after them now.
 */
function widenedA(aBlocks: readonly Int8Array[], aLength: number): number {
  const layout = nearestLayout();
  const kept = keptA.find((set) => set.layout === layout && sameBlocks(set.blocks, aBlocks));
  if (kept) return kept.at;
  const total = aLength * aBlocks.length;
  if (keptA.length >= KEPT_A_SETS || keptAEnd + 3 * total > KEPT_A_BYTES) {
    keptA = [];
    keptAEnd = 0;
  }
  // The int8 staging right after the widened copy's place, then widened into it.
  const at = align16(keptAEnd);
  const stage = align16(at + 2 * total);
  growMemoryTo(memory, stage + total);
  const bytes = new Int8Array(memory.buffer);
  if (layout === "quads") {
    aBlocks.forEach((block, i) => bytes.set(block, at + i * aLength));
    // Whole words: `at` is aligned and each block a multiple of 16 bytes.
    const words = new Uint32Array(memory.buffer, at, total / 4);
    for (let i = 0; i < words.length; i++) words[i] ^= 0x80808080;
  } else {
    aBlocks.forEach((block, i) => bytes.set(block, stage + i * aLength));
    widen(stage, total, at);
  }
  keptA.push({ blocks: [...aBlocks], at, layout });
  keptAEnd = at + 2 * total;
  // b is laid out after KEPT_A_BYTES: a set larger than that was staged over it.
  if (stage + total > KEPT_A_BYTES) keptB = null;
  return at;
}

function checkDims(dims: number, a: Int8Array, b: Int8Array): void {
  if (dims % 16 !== 0 || a.length % dims !== 0 || b.length % dims !== 0) throw new Error("descriptor size must be a multiple of 16");
}

/**
 * Copies `a` and `b` into the kernel's memory as int16 (b padded with zero rows to a multiple of 4),
 * leaving `extraBytes` free after them; returns where each part lies. Overwrites the blocks `blockNeighbours` keeps.
 */
function load(a: Int8Array, b: Int8Array, dims: number, extraBytes: number): { pa: number; pb: number; free: number } {
  keptA = [];
  keptAEnd = 0;
  keptB = null;
  const countB = b.length / dims;
  // int8 staging for a and b, then their widened copies.
  const stageB = align16(a.length);
  const pa = align16(stageB + b.length);
  const pb = align16(pa + 2 * a.length);
  const free = align16(pb + 2 * roundUp4(countB) * dims);
  const bytesNeeded = free + extraBytes;
  growMemoryTo(memory, bytesNeeded);
  const bytes = new Int8Array(memory.buffer);
  bytes.set(a, 0);
  bytes.set(b, stageB);
  widen(0, a.length, pa);
  widen(stageB, b.length, pb);
  bytes.fill(0, pb + 2 * b.length, free);
  return { pa, pb, free };
}

/** All dot products of the descriptors of `a` (rows) with those of `b` (columns), row-major. */
export function dotProductMatrix(a: Int8Array, b: Int8Array, dims: number): Int32Array {
  checkDims(dims, a, b);
  const countA = a.length / dims;
  const countB = b.length / dims;
  // A row's last block of 4 may write 3 values past the row (see matrix in the .wat).
  const { pa, pb, free } = load(a, b, dims, (countA * countB + 3) * 4);
  matrix(pa, countA, pb, countB, dims, free);
  return new Int32Array(memory.buffer.slice(free, free + countA * countB * 4));
}

/** What mutual nearest-neighbour matching needs of one frame's dot products (see `blockNeighbours`). */
export interface FrameNeighbours {
  /** Per row of a: its largest dot product with b, the runner-up, and the first column reaching the largest. */
  rowBest: Int32Array;
  rowSecond: Int32Array;
  rowIndex: Int32Array;
  /** Per column of b: the first row of a whose dot product with it is the column's largest. */
  columnRow: Int32Array;
}

function sameBlocks(x: readonly Int8Array[], y: readonly Int8Array[]): boolean {
  return x.length === y.length && x.every((block, i) => block.buffer === y[i].buffer && block.byteOffset === y[i].byteOffset && block.length === y[i].length);
}

/** The figures `blockNeighbours` returns, copied out of kernel memory into one array reused from call to call. */
let neighbourValues = new Int32Array(16_384);

/**
 * For each pair in order, the nearest-neighbour figures of the dot products of block `pairs[k][0]` of `a` (rows: the
 * same keypoints described in one frame) with block `pairs[k][1]` of `b`, computed without storing the matrix. Equal
 * to a scalar scan (rows, then columns, ascending; ties keep the first): INT32_MIN, INT32_MIN, -1 for a row when b is
 * empty, -1 for a column when a is. Every block of `a` holds the same rows, and so does every block of `b`. The last
 * few sets of `a` blocks stay in kernel memory between calls with the same arrays (a session's probe images compared
 * with many images), and so do the last `b` blocks laid out (an enrolled image compared with each probe image in turn);
 * consecutive pairs of consecutive `a` blocks against one `b` block take one kernel call. The figures are views of one
 * array that the next call writes over (a comparison reads them before it compares the next pair of images).
 */
export function blockNeighbours(aBlocks: readonly Int8Array[], bBlocks: readonly Int8Array[], pairs: readonly (readonly [number, number])[], dims: number): FrameNeighbours[] {
  const aLength = aBlocks[0]?.length ?? 0;
  const bLength = bBlocks[0]?.length ?? 0;
  for (const block of aBlocks) checkDims(dims, block, block);
  for (const block of bBlocks) checkDims(dims, block, block);
  if (aBlocks.some((block) => block.length !== aLength)) throw new Error("a must hold the same number of rows in every frame");
  if (bBlocks.some((block) => block.length !== bLength)) throw new Error("b must hold the same number of rows in every frame");
  const countA = aLength / dims;
  const countB = bLength / dims;
  const padB = roundUp16(countB);
  const laidB = 2 * padB * dims;
  const layout = nearestLayout();
  const pa = widenedA(aBlocks, aLength);
  // One block of a's bytes: int16 values, or one byte each in the "quads" layout.
  const aBlockBytes = layout === "quads" ? aLength : 2 * aLength;
  // b after the kept sets' room, so that its place stays put while they change.
  const pb = align16(Math.max(KEPT_A_BYTES, keptAEnd));
  const perFrame = 3 * countA + 2 * padB;
  // b laid out, then staged as int8 (half as many bytes), then the kernel's scratch and output.
  const stageB = pb + laidB * bBlocks.length;
  const scratch = stageB + (laidB / 2) * bBlocks.length;
  const out = scratch + 48;
  growMemoryTo(memory, out + perFrame * pairs.length * 4);
  if (!keptB || keptB.at !== pb || keptB.padB !== padB || keptB.layout !== layout || !sameBlocks(keptB.blocks, bBlocks)) {
    layColumnPairs(layout === "quads" ? quadLayer : main, bBlocks, dims, padB, pb, stageB);
    keptB = { blocks: [...bBlocks], at: pb, padB, layout };
  }
  for (let k = 0; k < pairs.length; ) {
    const [first, b] = pairs[k];
    let run = 1;
    while (k + run < pairs.length && pairs[k + run][1] === b && pairs[k + run][0] === first + run) run++;
    nearest(pa + first * aBlockBytes, countA, run, pb + b * laidB, countB, padB, dims, out + k * perFrame * 4, scratch);
    k += run;
  }
  if (neighbourValues.length < perFrame * pairs.length) neighbourValues = new Int32Array(2 * perFrame * pairs.length);
  const values = neighbourValues;
  values.set(new Int32Array(memory.buffer, out, perFrame * pairs.length));
  return pairs.map((_, k) => {
    const at = k * perFrame;
    return {
      rowBest: values.subarray(at, at + countA),
      rowSecond: values.subarray(at + countA, at + 2 * countA),
      rowIndex: values.subarray(at + 2 * countA, at + 3 * countA),
      columnRow: values.subarray(at + 3 * countA + padB, at + 3 * countA + padB + countB),
    };
  });
}

/**
 * A matrix searched again and again (the generic bank): kept in a second instance of the kernel, whose memory holds
 * such matrices from its start, widened to int16 and laid out column pair by column pair for `secondBest`; the
 * rows searched with it are staged after them. Matrices are placed once per thread and never freed.
 */
export interface ResidentMatrix {
  readonly rows: number;
  readonly dims: number;
  /** Rows padded to a multiple of 16. */
  readonly rowsPadded: number;
  /** Byte offset in the resident instance's memory. */
  readonly at: number;
}

interface ResidentKernel extends PairLayer {
  secondBest: (pa: number, na: number, bytes: number, pt: number, nb: number, nbPad: number, out: number, scratch: number) => void;
  matrix: typeof matrix;
  /** End of the resident matrices; rows are staged after it. */
  top: number;
}
let resident: ResidentKernel | null = null;
const residentMatrices = new WeakMap<Int8Array, ResidentMatrix>();

function residentKernel(): ResidentKernel {
  if (!resident) {
    const exports = new WebAssembly.Instance(kernelModule, {}).exports;
    resident = {
      memory: exports.memory as WebAssembly.Memory,
      secondBest: exports.secondBest as ResidentKernel["secondBest"],
      matrix: exports.matrix as typeof matrix,
      layPairs: exports.layPairs as PairLayer["layPairs"],
      top: 0,
    };
  }
  return resident;
}

/** `values` int16 of the resident instance's memory, reserved for good after the resident data already there. */
function reserveResident(values: number): Int16Array {
  const kernel = residentKernel();
  const at = align16(kernel.top);
  kernel.top = at + values * 2;
  growMemoryTo(kernel.memory, kernel.top);
  return new Int16Array(kernel.memory.buffer, at, values);
}

/**
 * `a` widened into the resident instance's memory after its resident data, with `extraBytes` free from `free` on: one
 * call's staging, which the next call overwrites.
 */
function stageInResident(a: Int8Array, extraBytes: number): { kernel: ResidentKernel; pa: number; free: number } {
  const kernel = residentKernel();
  const pa = align16(kernel.top);
  const free = align16(pa + a.length * 2);
  growMemoryTo(kernel.memory, free + extraBytes);
  new Int16Array(kernel.memory.buffer, pa, a.length).set(a);
  return { kernel, pa, free };
}

/** `b` (rows of `dims` int8) placed in the resident instance, once per array. */
export function residentMatrix(b: Int8Array, dims: number): ResidentMatrix {
  const known = residentMatrices.get(b);
  if (known && known.dims === dims) return known;
  checkDims(dims, b, b);
  const rows = b.length / dims;
  const rowsPadded = roundUp16(rows);
  const at = reserveResident(rowsPadded * dims).byteOffset;
  const kernel = residentKernel();
  layColumnPairs(kernel, [b], dims, rowsPadded, at, align16(kernel.top));
  const matrix = { rows, dims, rowsPadded, at };
  residentMatrices.set(b, matrix);
  return matrix;
}

/**
 * Each row of `a`'s second largest dot product with the rows of a resident matrix: `blockNeighbours([a], [b], [[0, 0]],
 * dims)[0].rowSecond`, bit for bit, without the column bookkeeping and without copying b each call.
 */
export function secondBestDots(a: Int8Array, matrix: ResidentMatrix): Int32Array {
  const { dims } = matrix;
  checkDims(dims, a, a);
  const count = a.length / dims;
  if (count === 0) return new Int32Array(0);
  // rowBest, rowSecond, rowIndex as `nearest` lays them out (finishRow) after 48 bytes of scratch; rowSecond is the answer.
  const { kernel, pa, free: scratch } = stageInResident(a, 48 + 3 * count * 4);
  const out = scratch + 48;
  kernel.secondBest(pa, count, dims * 2, matrix.at, matrix.rows, matrix.rowsPadded, out, scratch);
  return new Int32Array(kernel.memory.buffer.slice(out + count * 4, out + 2 * count * 4));
}

/** Rows read again and again by `residentDotProducts` (the vocabulary's centroids): widened, row-major, in the resident instance. */
export interface ResidentRows {
  readonly rows: number;
  readonly dims: number;
  /** Byte offset in the resident instance's memory. */
  readonly at: number;
}
const residentRowSets = new WeakMap<Int8Array, ResidentRows>();

/** `b` (rows of `dims` int8) widened into the resident instance, once per array (rows padded with zeros to a multiple of 4). */
export function residentRows(b: Int8Array, dims: number): ResidentRows {
  const known = residentRowSets.get(b);
  if (known && known.dims === dims) return known;
  checkDims(dims, b, b);
  const rows = b.length / dims;
  const widened = reserveResident(roundUp4(rows) * dims).fill(0);
  widened.set(b);
  const placed = { rows, dims, at: widened.byteOffset };
  residentRowSets.set(b, placed);
  return placed;
}

/**
 * The dot products (row-major, `a`'s rows × `count` rows) of `a` with rows `first` to `first + count` of resident rows:
 * `dotProductMatrix(a, b.subarray(first × dims, (first + count) × dims), dims)`, bit for bit, without copying b. `count`
 * a multiple of 4 or reaching the last row.
 */
export function residentDotProducts(a: Int8Array, b: ResidentRows, first: number, count: number): Int32Array {
  const { dims } = b;
  checkDims(dims, a, a);
  if (first < 0 || first + count > b.rows || (count % 4 !== 0 && first + count !== b.rows)) throw new Error("rows outside the resident set");
  const rows = a.length / dims;
  if (rows === 0 || count === 0) return new Int32Array(rows * count);
  // A row's last block of 4 may write 3 values past the row (see matrix in the .wat).
  const { kernel, pa, free: out } = stageInResident(a, (rows * count + 3) * 4);
  kernel.matrix(pa, rows, b.at + first * dims * 2, count, dims, out);
  return new Int32Array(kernel.memory.buffer.slice(out, out + rows * count * 4));
}

export { INT32_MIN };
