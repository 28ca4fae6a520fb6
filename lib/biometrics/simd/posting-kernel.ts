import { PAGE_BYTES } from "./memory";
import { nativeKernels, nativeVariant } from "./native-kernels";
import { POSTING_KERNEL_WASM_BASE64 } from "./posting-kernel-wasm";

/** wasm32 addresses: one thread's posting memory cannot exceed 4 GiB (about 150,000 pets). */
const MAX_BYTES = 2 ** 32;
/** Addresses below this hold the Hamming weight table (65 f64); 0 also means "no block". */
const RESERVED_BYTES = 1024;

const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(POSTING_KERNEL_WASM_BASE64, "base64")), {});
const memory = instance.exports.memory as WebAssembly.Memory;

/**
 * The posting memory backed by transparent huge pages where the addon can ask for them: under Linux's common setting
 * (`madvise`) V8's memories get 4 KiB pages, so a gallery of gigabytes is first touched and then scanned a small page at
 * a time (a fault and a TLB entry each). Asked again over the whole memory whenever it grows.
 */
const adviseHugePages = () => nativeKernels?.adviseHugePages(memory.buffer);
adviseHugePages();

const scanInWasm = instance.exports.scan as (
  block: number,
  queryLow: number,
  queryHigh: number,
  angle: number,
  weight: number,
  stampKey: number,
  threshold: number,
  angleShift: number,
  log: number,
  logCount: number,
) => number;

/** A pass's lookups in the order they are scanned (word order), `size` of them: lookup k's list and its query. */
export interface LookupBatch {
  size: number;
  /** The list's first block and its length in postings. */
  heads: Int32Array;
  lengths: Int32Array;
  /** The probe keypoint's signature under the word (low, high), its angle, the vote weight and stamp key (`scan`). */
  signatures: Uint32Array;
  angles: Uint8Array;
  weights: Float64Array;
  stampKeys: Int32Array;
}

/**
 * Scans `batch`'s lookups from `from` on, each as posting-kernel.wat's `scan` (every posting within `threshold` bits
 * of the query votes for its image, appended to the log at `log`, which holds `count` votes and has room for
 * `capacity`), lookup k's number of votes left in `votes[k]`. Stops before a lookup whose list could overflow the log;
 * returns the lookup it stopped at (`batch.size` when all are done). Every address is a byte offset in this thread's
 * kernel memory. The native kernel in use (native-kernels.ts) scans the same memory with the same votes, eight
 * signatures an instruction where the processor counts bits in vectors.
 */
export function scanLookups(batch: LookupBatch, from: number, threshold: number, angleShift: number, log: number, capacity: number, count: number, votes: Int32Array): number {
  const variant = nativeVariant();
  const { size, heads, lengths, signatures, angles, weights, stampKeys } = batch;
  if (variant !== null) {
    return nativeKernels!.scanLookups(variant, memory.buffer, heads, lengths, signatures, angles, weights, stampKeys, size, from, threshold, angleShift, log, capacity, count, votes);
  }
  let k = from;
  for (; k < size && count + lengths[k] <= capacity; k++) {
    const after = scanInWasm(heads[k], signatures[2 * k], signatures[2 * k + 1], angles[k], weights[k], stampKeys[k], threshold, angleShift, log, count);
    votes[k] = after - count;
    count = after;
  }
  return k;
}

/** `finish`'s arguments (posting-kernel.wat), addresses in this thread's kernel memory. */
type FinishArguments = [
  log: number,
  logCount: number,
  sorted: number,
  cursors: number,
  windows: number,
  windowShift: number,
  histograms: number,
  flags: number,
  windowRows: number,
  binsLog2: number,
  rowPet: number,
  petBest: number,
  petTouched: number,
];

const finishInWasm = instance.exports.finish as (...args: FinishArguments) => number;

/**
 * See posting-kernel.wat's `finish`: one probe image's logged votes summed into its pets' two best row scores; returns
 * how many pets were scored for the first time (listed at `petTouched`). Native code where the addon is in use, with
 * the same arithmetic.
 */
export function finishProbeImage(...args: FinishArguments): number {
  const variant = nativeVariant();
  return variant === null ? finishInWasm(...args) : nativeKernels!.finishProbeImage(variant, memory.buffer, ...args);
}

/** A batch of search keys, each at an address of the key table (its address, then its image row: 8 bytes a key). */
export const countKeyWords = instance.exports.count as (keys: number, keyCount: number, counts: number) => void;
export const partitionKeyPostings = instance.exports.partition as (keys: number, keyCount: number, buckets: number, shift: number) => void;
export const appendPostingRecords = instance.exports.append as (records: number, end: number, cursors: number) => void;

/** Views of the kernel memory; a grown memory replaces its buffer, so they are re-made on demand. */
export interface KernelViews {
  u8: Uint8Array;
  u16: Uint16Array;
  i32: Int32Array;
  u32: Uint32Array;
  f64: Float64Array;
}

let views: KernelViews | null = null;

export function kernelViews(): KernelViews {
  const buffer = memory.buffer;
  if (!views || views.u8.buffer !== buffer) {
    views = { u8: new Uint8Array(buffer), u16: new Uint16Array(buffer), i32: new Int32Array(buffer), u32: new Uint32Array(buffer), f64: new Float64Array(buffer) };
  }
  return views;
}

/** Writes the vote weight of each Hamming distance (0..64) where the kernel reads it. */
export function setHammingWeights(weights: ArrayLike<number>): void {
  kernelViews().f64.set(Array.from(weights), 0);
}

const align8 = (bytes: number) => (bytes + 7) & ~7;

/**
 * The one allocator of this thread's kernel memory, shared by every gallery the thread holds. Freed
 * regions are kept by size and reused for the same size (posting blocks and scratch arrays come in a
 * few sizes); the memory itself never shrinks, as WebAssembly memories cannot.
 */
class KernelHeap {
  private top = RESERVED_BYTES;
  private readonly freed = new Map<number, number[]>();

  /** Bytes of kernel memory ever handed out (freed regions included: they are reused, not returned). */
  get reservedBytes(): number {
    return this.top;
  }

  /** A zeroed region of at least `bytes`, 8-byte aligned. */
  alloc(bytes: number): number {
    const size = align8(bytes);
    const reused = this.freed.get(size)?.pop();
    if (reused !== undefined) {
      kernelViews().u8.fill(0, reused, reused + size);
      return reused;
    }
    const address = this.top;
    this.reserve(address + size);
    this.top += size;
    return address;
  }

  /**
   * Grows the memory at once so that `bytes` more can be handed out without growing it again, counting the freed
   * regions as room (a gallery restored in place of one dropped reuses its blocks, which are of the same sizes).
   */
  prepare(bytes: number): void {
    this.reserve(this.top + Math.max(0, align8(bytes) - this.freedBytes));
  }

  private get freedBytes(): number {
    let bytes = 0;
    for (const [size, list] of this.freed) bytes += size * list.length;
    return bytes;
  }

  free(address: number, bytes: number): void {
    const size = align8(bytes);
    let list = this.freed.get(size);
    if (!list) this.freed.set(size, (list = []));
    list.push(address);
  }

  private reserve(end: number): void {
    const have = memory.buffer.byteLength;
    if (end <= have) return;
    if (end > MAX_BYTES) throw new RangeError("1:N index memory exhausted in this engine thread (4 GiB)");
    // Grow by at least an eighth, so that a gallery built pet by pet grows O(log n) times.
    const wanted = Math.min(MAX_BYTES, Math.max(end, have + have / 8));
    memory.grow(Math.ceil((wanted - have) / PAGE_BYTES));
    adviseHugePages();
  }
}

export const kernelHeap = new KernelHeap();
