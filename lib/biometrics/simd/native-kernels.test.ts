import { describe, expect, it } from "vitest";
import fs from "node:fs";
import { ENGINE_KERNELS, nativeKernels } from "./native-kernels";
import { kernelHeap } from "./posting-kernel";

const variants = nativeKernels?.variants ?? [];

/** The pair matcher's one-point RANSAC as its JavaScript counts it (pair-matcher.ts, agreeingWithAnchor): what bestAnchor must equal. */
function firstBestAnchor(
  [scales, logScales, ax, ay, bx, by]: Float64Array[],
  count: number,
  cosRotation: number,
  sinRotation: number,
  logTolerance: number,
  tolerancePx: number,
  toleranceRelative: number,
): number {
  let bestAnchor = -1;
  let bestCount = 0;
  for (let m = 0; m < count; m++) {
    const cos = scales[m] * cosRotation;
    const sin = scales[m] * sinRotation;
    let agreeing = 0;
    for (let n = 0; n < count; n++) {
      if (Math.abs(logScales[n] - logScales[m]) > logTolerance) continue;
      const dx = ax[n] - ax[m];
      const dy = ay[n] - ay[m];
      const px = bx[m] + cos * dx - sin * dy;
      const py = by[m] + sin * dx + cos * dy;
      const tolerance = tolerancePx + toleranceRelative * scales[m] * Math.sqrt(dx * dx + dy * dy);
      const ex = px - bx[n];
      const ey = py - by[n];
      if (ex * ex + ey * ey <= tolerance * tolerance) agreeing++;
    }
    if (agreeing > bestCount) {
      bestCount = agreeing;
      bestAnchor = m;
    }
  }
  return bestAnchor;
}

/**
 * `count` tentative matches, a share of them following one similarity transform (rotation, scale, shift) and the rest
 * anywhere, on a grid of whole pixels so that many distances sit exactly on the tolerance; `size` values an array.
 */
function matches(count: number, size: number, seed: number): Float64Array[] {
  let state = seed;
  const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) | 0) >>> 0) / 2 ** 32;
  const arrays = Array.from({ length: 6 }, () => new Float64Array(size));
  const [scales, logScales, ax, ay, bx, by] = arrays;
  for (let n = 0; n < count; n++) {
    ax[n] = Math.round(next() * 300);
    ay[n] = Math.round(next() * 300);
    const inlier = next() < 0.5;
    scales[n] = inlier ? 1.25 : 0.5 + next() * 2;
    logScales[n] = Math.log(scales[n]);
    bx[n] = inlier ? Math.round(1.25 * (0.8 * ax[n] - 0.6 * ay[n]) + 40 + next() * 8) : Math.round(next() * 300);
    by[n] = inlier ? Math.round(1.25 * (0.6 * ax[n] + 0.8 * ay[n]) - 20 + next() * 8) : Math.round(next() * 300);
  }
  return arrays;
}

/** This process's mappings Linux was asked to back with transparent huge pages (VmFlags "hg" in smaps): bytes by start. */
function hugePageAdvised(): Map<string, number> {
  const mappings = fs.readFileSync("/proc/self/smaps", "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
  return new Map(
    mappings
      .filter((mapping) => /^VmFlags:.* hg\b/m.test(mapping))
      .map((mapping) => [mapping.slice(0, mapping.indexOf("-")), Number(/^Size:\s+(\d+) kB/m.exec(mapping)?.[1] ?? 0) * 1024] as const),
  );
}

/**
 * Bytes advised since `before`: each advised mapping's growth. A mapping gone meanwhile (a memory another test left,
 * collected during the growth) takes nothing off.
 */
function hugePageAdvisedSince(before: Map<string, number>): number {
  return [...hugePageAdvised()].reduce((sum, [start, bytes]) => sum + Math.max(0, bytes - (before.get(start) ?? 0)), 0);
}

const MIB = 2 ** 20;
const hugePagesAdvisable = nativeKernels !== null && fs.existsSync("/sys/kernel/mm/transparent_hugepage/enabled");

describe("the native kernels (native/kernels)", () => {
  it.runIf(hugePagesAdvisable)("ask Linux to back a WebAssembly memory with huge pages", () => {
    const memory = new WebAssembly.Memory({ initial: 1024 });
    const before = hugePageAdvised();
    expect(nativeKernels!.adviseHugePages(memory.buffer)).toBe(64 * MIB);
    expect(hugePageAdvisedSince(before)).toBeGreaterThanOrEqual(64 * MIB);
    expect(() => nativeKernels!.adviseHugePages(new Uint8Array(8) as unknown as ArrayBuffer)).toThrow(TypeError);
  });

  it.runIf(hugePagesAdvisable)("have the posting kernel's memory advised for huge pages as it grows", () => {
    const before = hugePageAdvised();
    kernelHeap.prepare(256 * MIB);
    // The memory grew by at least 256 MiB, less what it held free before (at most an eighth of a small memory).
    expect(hugePageAdvisedSince(before)).toBeGreaterThanOrEqual(200 * MIB);
  });

  it.runIf(process.arch === "x64" && process.platform === "linux")("are built by npm install and run first on this machine", () => {
    expect(ENGINE_KERNELS.length).toBeGreaterThan(1);
    expect(ENGINE_KERNELS.at(-1)).toBe("wasm");
    expect(["avx512-vnni", "avx2"]).toContain(ENGINE_KERNELS[0]);
  });

  it.each(variants.map((variant) => [variant.name, variant.id] as const))(
    "%s: bestAnchor finds the JavaScript's first anchor with the most agreeing matches",
    (_, id) => {
      const tolerances = [Math.log(1.5), 6, 0.12] as const;
      for (const count of [0, 1, 2, 3, 7, 8, 9, 16, 17, 33, 120]) {
        for (const seed of [1, 2, 3]) {
          const arrays = matches(count, count + 5, 10 * count + seed);
          for (const rotation of [0, 0.6435011087932844, -0.3490658503988659]) {
            const [cos, sin] = [Math.cos(rotation), Math.sin(rotation)];
            expect(nativeKernels!.bestAnchor(id, ...(arrays as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]), count, cos, sin, ...tolerances)).toBe(
              firstBestAnchor(arrays, count, cos, sin, ...tolerances),
            );
          }
        }
      }
      // Ties keep the first anchor; a tolerance of zero still counts the anchor itself.
      const same = matches(12, 12, 5).map((array, k) => (k < 2 ? array.fill(k === 0 ? 1 : 0) : array));
      expect(nativeKernels!.bestAnchor(id, ...(same as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]), 12, 1, 0, 0, 0, 0)).toBe(
        firstBestAnchor(same, 12, 1, 0, 0, 0, 0),
      );
    },
  );

  it.runIf(variants.length > 0)("layQuads lays rows out by column quads with each row's sum, as the quads layout reads b", () => {
    const buffer = new ArrayBuffer(1024);
    const rows = new Int8Array(buffer, 0, 3 * 8);
    rows.set([1, -2, 3, -4, 5, -6, 7, -128, 127, 0, 0, 0, 0, 0, 0, 1, -1, -1, -1, -1, 2, 2, 2, 2]);
    nativeKernels!.layQuads(buffer, 0, 3, 8, 64);
    // Quad q of row j at 64 + (q x 3 + j) x 4, then the three sums.
    expect(Array.from(new Int8Array(buffer, 64, 24))).toEqual([1, -2, 3, -4, 127, 0, 0, 0, -1, -1, -1, -1, 5, -6, 7, -128, 0, 0, 0, 1, 2, 2, 2, 2]);
    expect(Array.from(new Int32Array(buffer, 88, 3))).toEqual([-124, 128, 4]);
    expect(() => nativeKernels!.layQuads(buffer, 0, 3, 8, 1020)).toThrow(RangeError);
    expect(() => nativeKernels!.layQuads(buffer, 0, 3, 8, 8)).toThrow(RangeError);
    expect(() => nativeKernels!.layQuads(buffer, 0, 3, 6, 64)).toThrow(RangeError);
  });

  it.runIf(variants.length > 0)("refuse arguments outside their arrays or buffer instead of reading past them", () => {
    const native = nativeKernels!;
    const id = variants[0].id;
    const buffer = new ArrayBuffer(4096);
    // nearest(variant, buffer, pa, na, frames, pb, nb, nbPad, dims, out): 2 rows of 16 dims against 16 columns fit.
    expect(() => native.nearest(id, buffer, 0, 2, 1, 64, 16, 16, 16, 1024)).not.toThrow();
    expect(() => native.nearest(id, buffer, 0, 2, 1, 64, 16, 16, 16, 4000)).toThrow(RangeError);
    expect(() => native.nearest(id, buffer, 0, 300, 1, 64, 16, 16, 16, 1024)).toThrow(RangeError);
    expect(() => native.nearest(id, buffer, 0, 2, 1, 64, 17, 16, 16, 1024)).toThrow(RangeError);
    expect(() => native.nearest(id, buffer, 0, 2, 1, 64, 16, 16, 24, 1024)).toThrow(RangeError);
    expect(() => native.nearest(id, buffer, 0, -1, 1, 64, 16, 16, 16, 1024)).toThrow(TypeError);
    expect(() => native.nearest(99, buffer, 0, 2, 1, 64, 16, 16, 16, 1024)).toThrow(RangeError);
    const arrays = matches(8, 8, 1) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
    expect(native.bestAnchor(id, ...arrays, 8, 1, 0, 0.4, 6, 0.12)).toBeGreaterThanOrEqual(0);
    expect(() => native.bestAnchor(id, ...arrays, 9, 1, 0, 0.4, 6, 0.12)).toThrow(TypeError);
    expect(() => native.bestAnchor(id, arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], new Float32Array(8) as never, 8, 1, 0, 0.4, 6, 0.12)).toThrow(TypeError);
    expect(() => native.bestAnchor(99, ...arrays, 8, 1, 0, 0.4, 6, 0.12)).toThrow(RangeError);
    // lookupWords(variant, descriptors, count, wordsPer, coarse, fine, fineRows, coarseNorms, fineNorms, projection,
    // scale, medians, words, signatures, distances): 3 descriptors against 16 cells of 16 words.
    const lookup = (count: number, wordsPer: number, fineRows = 16, words = new Uint16Array(6), medians = new Float32Array(256 * 64), distances = new Int32Array(6)) =>
      native.lookupWords(id, new Int8Array(3 * 64), count, wordsPer, new Int16Array(16 * 64), new Int16Array(256 * 64), fineRows, new Int32Array(16), new Int32Array(256), new Int16Array(64 * 64), 1, medians, words, new Uint32Array(24), distances);
    expect(() => lookup(3, 2)).not.toThrow();
    expect(() => lookup(3, 4, 16, new Uint16Array(12), undefined, new Int32Array(12))).not.toThrow();
    expect(() => lookup(4, 2)).toThrow(TypeError);
    expect(() => lookup(3, 5)).toThrow(RangeError);
    expect(() => lookup(3, 0)).toThrow(RangeError);
    expect(() => lookup(3, 2, 16, undefined, undefined, new Int32Array(5))).toThrow(TypeError);
    expect(() => lookup(3, 2, 32)).toThrow(TypeError);
    expect(() => lookup(3, 2, 8)).toThrow(RangeError);
    expect(() => lookup(3, 2, 16, new Uint16Array(5))).toThrow(TypeError);
    expect(() => lookup(3, 2, 16, new Uint16Array(6), new Float32Array(256 * 64 - 1))).toThrow(TypeError);
    // scanLookups(variant, buffer, heads, lengths, signatures, angles, weights, stampKeys, size, from, threshold,
    // angleShift, log, capacity, count, votes): a block of capacity 4 at 1024 holding 2 postings, equal to the query, a
    // log at 2048 with room for 128 votes.
    const memory = new DataView(buffer);
    memory.setUint16(1024 + 4, 2, true);
    memory.setUint16(1024 + 6, 4, true);
    const votes = new Int32Array(3);
    const scan = (heads: number[], count = 0, { lengths = heads.map(() => 2), capacity = 128, threshold = 20 } = {}) =>
      native.scanLookups(id, buffer, Int32Array.from(heads), Int32Array.from(lengths), new Uint32Array(2 * heads.length), new Uint8Array(heads.length),
        new Float64Array(heads.length).fill(1), new Int32Array(heads.length), heads.length, 0, threshold, 4, 2048, capacity, count, votes);
    expect(scan([1024, 1024, 1024])).toBe(3);
    expect(Array.from(votes)).toEqual([2, 2, 2]);
    // It stops before a lookup whose list could overflow the log's room.
    expect(scan([1024, 1024, 1024], 123)).toBe(2);
    expect(() => scan([1024], 0, { capacity: 129 })).toThrow(RangeError);
    expect(() => scan([1024], 0, { threshold: 65 })).toThrow(RangeError);
    expect(() => scan([4090])).toThrow(RangeError);
    expect(() => scan([1024], 0, { lengths: [0] })).not.toThrow();
    memory.setUint16(1024 + 4, 5, true);
    expect(() => scan([1024])).toThrow(RangeError);
    memory.setUint16(1024 + 4, 2, true);
    expect(() => native.scanLookups(id, buffer, new Int32Array(1), new Int32Array(1), new Uint32Array(1), new Uint8Array(1), new Float64Array(1), new Int32Array(1), 1, 0, 20, 4, 2048, 128, 0, votes)).toThrow(TypeError);
    // A chain that comes back to its first block is refused, not followed for ever (its postings far from the query cast
    // no vote, so only the chain's length stops it).
    for (let byte = 1024 + 8; byte < 1024 + 8 + 2 * 8; byte++) memory.setUint8(byte, 0xff);
    expect(scan([1024])).toBe(1);
    expect(votes[0]).toBe(0);
    memory.setUint32(1024, 1024, true);
    expect(() => scan([1024])).toThrow(RangeError);
  });

  it.each(variants.map((variant) => [variant.name, variant.id] as const))(
    "%s: finishProbeImage sums a log's votes into its pets' scores and refuses rows, stamps and pets outside its regions",
    (_, id) => {
      // Windows of 16 rows, 2 of them; 16 bins. Regions: log, sorted, cursors, histograms, flags, window rows, each row's
      // pet, each pet's two best scores, the pets listed.
      const buffer = new ArrayBuffer(64 * 1024);
      const memory = new DataView(buffer);
      const [log, sorted, cursors, histograms, flags, windowRows, rowPet, petBest, petTouched] = [0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x5100, 0x6000, 0x7000, 0x8000];
      const vote = (i: number, row: number, stamp: number, bin: number, weight: number) => {
        memory.setInt32(log + 16 * i, row, true);
        memory.setInt32(log + 16 * i + 4, (stamp << 4) | bin, true);
        memory.setFloat64(log + 16 * i + 8, weight, true);
      };
      for (let row = 0; row < 32; row++) memory.setInt32(rowPet + 4 * row, -1, true);
      memory.setInt32(rowPet + 4 * 3, 0, true);
      memory.setInt32(rowPet + 4 * 20, 1, true);
      const finish = (count: number) => nativeKernels!.finishProbeImage(id, buffer, log, count, sorted, cursors, 2, 4, histograms, flags, windowRows, 4, rowPet, petBest, petTouched);
      // Row 3 (pet 0) takes its first vote of stamp 1, not its second; row 20 (pet 1) one vote; row 9 has no pet.
      vote(0, 3, 1, 2, 0.5);
      vote(1, 20, 1, 5, 0.25);
      vote(2, 3, 1, 3, 1);
      vote(3, 9, 2, 0, 4);
      vote(4, 3, 2, 15, 0.125);
      expect(finish(5)).toBe(2);
      expect([0, 1].map((k) => memory.getInt32(petTouched + 4 * k, true))).toEqual([0, 1]);
      // Pet 0: bins 2 (0.5) and 15 (0.125) are not adjacent to each other; bin 15 pairs with bin 0 (wrapping).
      expect([0, 1, 2, 3].map((k) => memory.getFloat64(petBest + 8 * k, true))).toEqual([0.5, 0, 0.25, 0]);
      vote(0, 40, 1, 2, 0.5);
      expect(() => finish(1)).toThrow(RangeError);
      vote(0, 3, 0, 2, 0.5);
      expect(() => finish(1)).toThrow(RangeError);
      vote(0, 3, 1, 2, 0.5);
      memory.setInt32(rowPet + 4 * 3, 100_000, true);
      expect(() => finish(1)).toThrow(RangeError);
      memory.setInt32(rowPet + 4 * 3, 0, true);
      expect(() => finish(4000)).toThrow(RangeError);
      expect(() => nativeKernels!.finishProbeImage(id, buffer, log, 1, sorted, cursors, 2, 4, 0xfff0, flags, windowRows, 4, rowPet, petBest, petTouched)).toThrow(RangeError);
    },
  );
});
