import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  blockNeighbours,
  dotProductMatrix,
  INT32_MIN,
  residentDotProducts,
  residentMatrix,
  residentRows,
  secondBestDots,
  type FrameNeighbours,
} from "./dot-kernel";
import { ENGINE_KERNEL, ENGINE_KERNELS, useEngineKernel } from "./native-kernels";

function randomDescriptors(count: number, dims: number, seed: number): Int8Array {
  const values = new Int8Array(count * dims);
  let state = seed;
  for (let i = 0; i < values.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) | 0;
    values[i] = (state >> 24) % 128;
  }
  return values;
}

describe("dotProductMatrix (SIMD kernel)", () => {
  it("equals the scalar dot product of every row of a with every row of b", () => {
    const a = randomDescriptors(13, 128, 10);
    const b = randomDescriptors(29, 128, 11);
    const expected: number[] = [];
    for (let i = 0; i < 13; i++) {
      for (let j = 0; j < 29; j++) {
        let dot = 0;
        for (let d = 0; d < 128; d++) dot += a[i * 128 + d] * b[j * 128 + d];
        expected.push(dot);
      }
    }
    expect(Array.from(dotProductMatrix(a, b, 128))).toEqual(expected);
    a.fill(127, 0, 128);
    b.fill(-128, 0, 128);
    expect(dotProductMatrix(a, b, 128)[0]).toBe(127 * -128 * 128);
  });
});

/** The matrix, then nearest-neighbour figures by a plain scan: what `blockNeighbours` must equal. */
function scalarNeighbours(a: Int8Array, frames: number, b: Int8Array, dims: number) {
  const countA = a.length / dims / frames;
  const countB = b.length / dims;
  const dots = dotProductMatrix(a, b, dims);
  return Array.from({ length: frames }, (_, f) => {
    const rowBest: number[] = [], rowSecond: number[] = [], rowIndex: number[] = [];
    const columnBest = new Array<number>(countB).fill(INT32_MIN);
    const columnRow = new Array<number>(countB).fill(-1);
    for (let i = 0; i < countA; i++) {
      let best = INT32_MIN, second = INT32_MIN, index = -1;
      for (let j = 0; j < countB; j++) {
        const dot = dots[(f * countA + i) * countB + j];
        if (dot > best) [second, best, index] = [best, dot, j];
        else if (dot > second) second = dot;
        if (dot > columnBest[j]) [columnBest[j], columnRow[j]] = [dot, i];
      }
      rowBest.push(best); rowSecond.push(second); rowIndex.push(index);
    }
    return { rowBest, rowSecond, rowIndex, columnRow };
  });
}

/** `a`'s `frames` blocks of rows (the same keypoints in several frames), each paired with `b`, as the matcher's upright hypotheses are. */
function framesAgainst(a: Int8Array, frames: number, b: Int8Array, dims: number) {
  const rows = a.length / frames;
  const blocks = Array.from({ length: frames }, (_, f) => a.subarray(f * rows, (f + 1) * rows));
  return blockNeighbours(blocks, [b], blocks.map((_, f) => [f, 0] as const), dims);
}

/** A frame's figures as plain arrays, to compare with `scalarNeighbours`. */
const plain = (frame: FrameNeighbours) => ({
  rowBest: Array.from(frame.rowBest),
  rowSecond: Array.from(frame.rowSecond),
  rowIndex: Array.from(frame.rowIndex),
  columnRow: Array.from(frame.columnRow),
});

describe.each(ENGINE_KERNELS)("blockNeighbours (%s kernel)", (kernel) => {
  beforeAll(() => useEngineKernel(kernel));
  afterAll(() => useEngineKernel(ENGINE_KERNEL));

  it.each([
    // rows per frame, columns, frames, dims, value range: small ranges force ties (first index must win)
    [13, 29, 1, 128, 127],
    [7, 4, 3, 128, 3],
    [5, 1, 2, 64, 2],
    [20, 33, 3, 16, 1],
    [0, 5, 3, 128, 127],
    [6, 0, 2, 128, 127],
    [17, 40, 2, 64, 1],
    [301, 300, 3, 64, 127],
  ])("equals a scalar scan: %i rows x %i columns, %i frames, %i dims, values up to %i", (rows, columns, frames, dims, max) => {
    const a = randomDescriptors(rows * frames, dims, rows + 1).map((v) => Math.abs(v) % (max + 1));
    const b = randomDescriptors(columns, dims, columns + 2).map((v) => Math.abs(v) % (max + 1));
    expect(framesAgainst(a, frames, b, dims).map(plain)).toEqual(scalarNeighbours(a, frames, b, dims));
  });

  it("equals a scalar scan for each pair of blocks, with a's blocks kept between calls and loaded again when overwritten", () => {
    const dims = 64;
    const aBlocks = [0, 1, 2, 3].map((k) => randomDescriptors(9, dims, 40 + k).map((v) => Math.abs(v) % 4));
    const pairs = [[0, 0], [1, 0], [2, 0], [2, 1], [1, 2], [3, 0], [3, 2]] as const;
    for (const [round, seed] of [10, 20, 30].entries()) {
      const bBlocks = [0, 1, 2].map((k) => randomDescriptors(7, dims, seed + k).map((v) => Math.abs(v) % 4));
      // Between the second and third rounds another kernel call writes over the memory a's blocks were kept in.
      if (round === 2) dotProductMatrix(randomDescriptors(50, dims, 5), randomDescriptors(50, dims, 6), dims);
      expect(blockNeighbours(aBlocks, bBlocks, pairs, dims).map(plain)).toEqual(pairs.map(([a, b]) => scalarNeighbours(aBlocks[a], 1, bBlocks[b], dims)[0]));
    }
  });

  it("equals a scalar scan with several sets of a kept and b kept laid out, past the sets it keeps and after an overwrite", () => {
    // A session comparison: each enrolled image (b) against every probe image (a) in turn, the probe images kept between
    // enrolled images; ten sets of a of different sizes cycle through more than the kernel keeps.
    const dims = 64;
    const aSets = Array.from({ length: 10 }, (_, s) => [0, 1, 2].map((k) => randomDescriptors(5 + s, dims, 100 + 3 * s + k).map((v) => Math.abs(v) % 5)));
    const bSets = [0, 1].map((s) => [0, 1, 2].map((k) => randomDescriptors(11 + s, dims, 200 + 3 * s + k).map((v) => Math.abs(v) % 5)));
    const pairs = [[0, 0], [1, 0], [2, 0], [2, 1], [1, 2]] as const;
    const expected = (aBlocks: Int8Array[], bBlocks: Int8Array[]) => pairs.map(([a, b]) => scalarNeighbours(aBlocks[a], 1, bBlocks[b], dims)[0]);
    for (const round of [0, 1]) {
      for (const bBlocks of bSets) {
        for (const aBlocks of aSets) expect(blockNeighbours(aBlocks, bBlocks, pairs, dims).map(plain)).toEqual(expected(aBlocks, bBlocks));
      }
      for (const aBlocks of aSets.slice(0, 3)) {
        for (const bBlocks of [...bSets, bSets[0]]) expect(blockNeighbours(aBlocks, bBlocks, pairs, dims).map(plain)).toEqual(expected(aBlocks, bBlocks));
      }
      if (round === 0) dotProductMatrix(randomDescriptors(50, dims, 5), randomDescriptors(50, dims, 6), dims);
    }
  });

  it("equals a scalar scan on signed values to the int8 extremes, for the light and the full comparison's shapes", () => {
    // The light comparison: 60 rows against 60 under the whole-frame hypotheses; the full one: 300 against 297 under all
    // nine (a's three frames and two half-step frames against b's three). b is laid out column pair by column pair
    // (sign-extended) for each image: one probe's blocks against several images in turn.
    const dims = 64;
    const signed = (count: number, seed: number) => {
      const values = randomDescriptors(count, dims, seed);
      values.fill(-128, 0, dims / 2).fill(127, dims / 2, dims);
      return values;
    };
    const whole = [[0, 0], [1, 0], [2, 0], [1, 2], [2, 1]] as const;
    const all = [...whole, [3, 0], [4, 0], [3, 1], [4, 2]] as const;
    for (const [rows, columns, aFrames, pairs] of [[60, 60, 3, whole], [300, 297, 5, all]] as const) {
      const aBlocks = Array.from({ length: aFrames }, (_, f) => signed(rows, 60 + f));
      for (const seed of [70, 80]) {
        const bBlocks = [0, 1, 2].map((f) => signed(columns, seed + f));
        expect(blockNeighbours(aBlocks, bBlocks, pairs, dims).map(plain)).toEqual(pairs.map(([a, b]) => scalarNeighbours(aBlocks[a], 1, bBlocks[b], dims)[0]));
      }
    }
  });

  it("rejects descriptors whose frames do not hold the same number of rows", () => {
    const b = [randomDescriptors(3, 16, 2)];
    expect(() => blockNeighbours([randomDescriptors(3, 16, 1), randomDescriptors(2, 16, 1)], b, [[0, 0], [1, 0]], 16)).toThrow();
    expect(() => blockNeighbours([randomDescriptors(3, 16, 1)], [b[0], randomDescriptors(2, 16, 3)], [[0, 0]], 16)).toThrow();
  });
});

describe("secondBestDots (resident matrix)", () => {
  it.each([
    // rows, matrix rows (not a multiple of 16, fewer than 2, exactly 16), dims, value range (small: ties)
    [13, 29, 128, 127],
    [1, 4096, 64, 127],
    [300, 37, 64, 3],
    [7, 1, 64, 127],
    [8, 16, 16, 1],
    [0, 5, 64, 127],
  ])("is the scalar scan's runner-up: %i rows x %i matrix rows, %i dims, values up to %i", (rows, columns, dims, max) => {
    const a = randomDescriptors(rows, dims, rows + 3).map((v) => Math.abs(v) % (max + 1) * (v < 0 ? -1 : 1));
    const b = randomDescriptors(columns, dims, columns + 4).map((v) => Math.abs(v) % (max + 1) * (v < 0 ? -1 : 1));
    expect(Array.from(secondBestDots(a, residentMatrix(b, dims)))).toEqual(scalarNeighbours(a, 1, b, dims)[0].rowSecond);
  });

  it("reaches the int8 extremes exactly and places each matrix once", () => {
    const a = new Int8Array(3 * 64).fill(-128);
    const b = new Int8Array(20 * 64).fill(-128);
    b.fill(127, 64, 128);
    const matrix = residentMatrix(b, 64);
    expect(residentMatrix(b, 64)).toBe(matrix);
    expect(Array.from(secondBestDots(a, matrix))).toEqual([128 * 128 * 64, 128 * 128 * 64, 128 * 128 * 64]);
    expect(scalarNeighbours(a, 1, b, 64)[0].rowSecond[0]).toBe(128 * 128 * 64);
  });
});

describe("residentDotProducts (SIMD kernel, rows kept in the resident instance)", () => {
  it("equals dotProductMatrix on the same slice of rows, placing the rows once", () => {
    const dims = 64;
    const b = randomDescriptors(70, dims, 91);
    const rows = residentRows(b, dims);
    expect(residentRows(b, dims)).toBe(rows);
    for (const [count, first, take] of [[9, 0, 64], [5, 64, 6], [1, 12, 4], [0, 0, 8]] as const) {
      const a = randomDescriptors(count, dims, 100 + first);
      expect(Array.from(residentDotProducts(a, rows, first, take))).toEqual(Array.from(dotProductMatrix(a, b.subarray(first * dims, (first + take) * dims), dims)));
    }
    expect(() => residentDotProducts(randomDescriptors(2, dims, 1), rows, 66, 6)).toThrow(/outside/);
  });
});
