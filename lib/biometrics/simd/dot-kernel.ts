import { DOT_KERNEL_WASM_BASE64 } from "./dot-kernel-wasm";

const PAGE_BYTES = 65_536;

const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(DOT_KERNEL_WASM_BASE64, "base64")), {});
const memory = instance.exports.memory as WebAssembly.Memory;
const matrix = instance.exports.matrix as (pa: number, na: number, pb: number, nb: number, dims: number, out: number) => void;
const dots = instance.exports.dots as (pq: number, pv: number, n: number, dims: number, out: number) => void;

function ensureMemory(bytes: number): void {
  if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE_BYTES));
}

/**
 * Dot products of one int8 query with `vectors` (row-major, `dims` each). The caller passes the same
 * `vectors` object across calls while it is unchanged, and the kernel skips copying it again.
 */
let residentVectors: Int8Array | null = null;

export function dotProducts(query: Int8Array, vectors: Int8Array, dims: number): Int32Array {
  if (dims % 16 !== 0 || query.length !== dims) throw new Error("query and vectors must have dims (a multiple of 16) per row");
  const count = vectors.length / dims;
  const offsetVectors = (dims + 15) & ~15;
  const offsetOut = (offsetVectors + vectors.length + 15) & ~15;
  ensureMemory(offsetOut + count * 4);
  const bytes = new Int8Array(memory.buffer);
  if (residentVectors !== vectors) {
    bytes.set(vectors, offsetVectors);
    residentVectors = vectors;
  }
  bytes.set(query, 0);
  dots(0, offsetVectors, count, dims, offsetOut);
  return new Int32Array(memory.buffer.slice(offsetOut, offsetOut + count * 4));
}

/** All dot products of the descriptors of `a` (rows) with those of `b` (columns), row-major. */
export function dotProductMatrix(a: Int8Array, b: Int8Array, dims: number): Int32Array {
  if (dims % 16 !== 0) throw new Error("descriptor size must be a multiple of 16");
  const countA = a.length / dims;
  const countB = b.length / dims;
  const offsetB = (a.length + 15) & ~15;
  const offsetOut = (offsetB + b.length + 15) & ~15;
  ensureMemory(offsetOut + countA * countB * 4);
  residentVectors = null;
  const bytes = new Int8Array(memory.buffer);
  bytes.set(a, 0);
  bytes.set(b, offsetB);
  matrix(0, countA, offsetB, countB, dims, offsetOut);
  return new Int32Array(memory.buffer.slice(offsetOut, offsetOut + countA * countB * 4));
}
