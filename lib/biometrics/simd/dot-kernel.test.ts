import { describe, expect, it } from "vitest";
import { dotProductMatrix, dotProducts } from "./dot-kernel";

function randomDescriptors(count: number, dims: number, seed: number): Int8Array {
  const values = new Int8Array(count * dims);
  let state = seed;
  for (let i = 0; i < values.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) | 0;
    values[i] = (state >> 24) % 128;
  }
  return values;
}

describe("dotProducts (SIMD kernel)", () => {
  it("matches scalar dot products, also after the resident vectors change", () => {
    const vectors = randomDescriptors(500, 64, 5);
    const query = randomDescriptors(1, 64, 6);
    const scalar = (v: Int8Array) =>
      Array.from({ length: v.length / 64 }, (_, j) => query.reduce((sum, q, d) => sum + q * v[j * 64 + d], 0));
    expect(Array.from(dotProducts(query, vectors, 64))).toEqual(scalar(vectors));
    dotProductMatrix(randomDescriptors(3, 64, 7), randomDescriptors(3, 64, 8), 64);
    expect(Array.from(dotProducts(query, vectors, 64))).toEqual(scalar(vectors));
    const other = randomDescriptors(20, 64, 9);
    expect(Array.from(dotProducts(query, other, 64))).toEqual(scalar(other));
  });
});

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
