import { createRequire } from "node:module";

/**
 * The engine's native kernels (native/kernels, built by npm install with node-gyp): the matcher's nearest-neighbour
 * figures (`nearest`, on a WebAssembly kernel's memory), its one-point RANSAC (`bestAnchor`), the 1:N vocabulary's
 * lookups (`lookupWords`) and the 1:N first stage's posting scans and vote sums (`scanLookups`, `finishProbeImage`), each in an AVX-512 and
 * an AVX2 variant giving the WebAssembly and JavaScript code's results exactly (decision 0045).
 */
interface NativeKernels {
  /** The variants this processor runs, fastest first, and how each one's `nearest` reads its matrices (kernels.c). */
  variants: { name: string; id: number; layout: NearestLayout }[];
  nearest: (variant: number, buffer: ArrayBuffer, pa: number, na: number, frames: number, pb: number, nb: number, nbPad: number, dims: number, out: number) => void;
  /** Lays `rows` int8 rows at `src` out as the "quads" layout's b from `dst` on (kernels.c). */
  layQuads: (buffer: ArrayBuffer, src: number, rows: number, dims: number, dst: number) => void;
  bestAnchor: (
    variant: number,
    scales: Float64Array, logScales: Float64Array, ax: Float64Array, ay: Float64Array, bx: Float64Array, by: Float64Array,
    count: number, cosRotation: number, sinRotation: number, logTolerance: number, tolerancePx: number, toleranceRelative: number,
  ) => number;
  lookupWords: (
    variant: number,
    descriptors: Int8Array, count: number, wordsPer: number,
    coarse: Int16Array, fine: Int16Array, fineRows: number, coarseNorms: Int32Array, fineNorms: Int32Array,
    projection: Int16Array, scale: number, medians: Float32Array, words: Uint16Array, signatures: Uint32Array, distances: Int32Array,
  ) => void;
  /** posting-kernel.ts' `scanLookups` on that kernel's memory (`buffer`); returns the lookup it stopped at (kernels.c). */
  scanLookups: (
    variant: number, buffer: ArrayBuffer, heads: Int32Array, lengths: Int32Array, signatures: Uint32Array, angles: Uint8Array,
    weights: Float64Array, stampKeys: Int32Array, size: number, from: number, threshold: number, angleShift: number, log: number,
    capacity: number, count: number, votes: Int32Array,
  ) => number;
  /** posting-kernel.wat's `finish` on that kernel's memory (`buffer`); returns how many pets it listed (kernels.c). */
  finishProbeImage: (
    variant: number, buffer: ArrayBuffer, log: number, logCount: number, sorted: number, cursors: number, windows: number, windowShift: number,
    histograms: number, flags: number, windowRows: number, binsLog2: number, rowPet: number, petBest: number, petTouched: number,
  ) => number;
  /**
   * Asks Linux to back this memory with transparent huge pages (madvise MADV_HUGEPAGE, which V8 does not ask for);
   * returns the bytes advised, 0 where refused or not Linux (kernels.c).
   */
  adviseHugePages: (buffer: ArrayBuffer) => number;
}

function loadNativeKernels(): NativeKernels | null {
  try {
    // Loaded by Node at run time from node_modules, never bundled: the package is a link into native/, which a bundler
    // would take for the project's own sources.
    return createRequire(import.meta.url)(/* turbopackIgnore: true */ "@rhinarium/native-kernels") as NativeKernels;
  } catch {
    return null;
  }
}

/** The addon, or null where it was not built (the engine then runs its WebAssembly and JavaScript code). */
export const nativeKernels = loadNativeKernels();

/** The kernel sets this process can run, fastest first: "avx512-vnni", "avx2" (native), "wasm" (no native code). */
export const ENGINE_KERNELS: readonly string[] = [...(nativeKernels?.variants.map((variant) => variant.name) ?? []), "wasm"];

/**
 * How the `nearest` kernel in use reads its matrices: "pairs" (the WebAssembly kernel's int16 rows and column pairs) or
 * "quads" (uint8 rows and int8 column quads with their sums: AVX-512 VNNI's vpdpbusd), kernels.c.
 */
export type NearestLayout = "pairs" | "quads";

let variantInUse: number | null = null;
let layoutInUse: NearestLayout = "pairs";

/** Makes the engine run the named kernel set of ENGINE_KERNELS in this thread (tests and benches compare them). */
export function useEngineKernel(name: string): void {
  if (!ENGINE_KERNELS.includes(name)) throw new Error(`no engine kernel ${name} here: ${ENGINE_KERNELS.join(", ")}`);
  const variant = nativeKernels?.variants.find((candidate) => candidate.name === name);
  variantInUse = variant?.id ?? null;
  layoutInUse = variant?.layout ?? "pairs";
}

/** The layout the `nearest` kernel in use reads. */
export function nearestLayout(): NearestLayout {
  return layoutInUse;
}

/** The native variant in use (its id for the addon's calls), or null for WebAssembly and JavaScript. */
export function nativeVariant(): number | null {
  return variantInUse;
}

/** The kernel set this process runs: ENGINE_KERNEL's when set, else the fastest. */
export const ENGINE_KERNEL = process.env.ENGINE_KERNEL || ENGINE_KERNELS[0];
useEngineKernel(ENGINE_KERNEL);
