import { describe, expect, it } from "vitest";
import { assembleNearestKernel } from "./assemble";
import { dotProducts, findNearestNeighbours } from "./nearest";
import { NEAREST_WASM_BASE64 } from "./nearest-wasm";

function randomDescriptors(count: number, dims: number, seed: number): Int8Array {
  const values = new Int8Array(count * dims);
  let state = seed;
  for (let i = 0; i < values.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) | 0;
    values[i] = (state >> 24) % 128;
  }
  return values;
}

function scalarNearest(a: Int8Array, b: Int8Array, dims: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.length / dims; i++) {
    let best = -(2 ** 31), second = -(2 ** 31), index = -1;
    for (let j = 0; j < b.length / dims; j++) {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += a[i * dims + d] * b[j * dims + d];
      if (dot > best) [second, best, index] = [best, dot, j];
      else if (dot > second) second = dot;
    }
    out.push(index, best, second);
  }
  return out;
}

describe("findNearestNeighbours (SIMD kernel)", () => {
  it("gives exactly the scalar loop's answer, including extreme int8 values", () => {
    const a = randomDescriptors(37, 128, 1);
    const b = randomDescriptors(53, 128, 2);
    a.fill(127, 0, 128);
    b.fill(-128, 128, 256);
    expect(Array.from(findNearestNeighbours(a, b, 128).values)).toEqual(scalarNearest(a, b, 128));
  });

  it("handles a gallery larger than the initial memory and an empty one", () => {
    const a = randomDescriptors(300, 128, 3);
    const b = randomDescriptors(900, 128, 4);
    expect(Array.from(findNearestNeighbours(a, b, 128).values)).toEqual(scalarNearest(a, b, 128));
    expect(Array.from(findNearestNeighbours(a.subarray(0, 128), new Int8Array(0), 128).values)).toEqual([-1, -(2 ** 31), -(2 ** 31)]);
  });

  it("is the committed build of nearest.wat (run `npm run build:wasm` after editing it)", async () => {
    expect(Buffer.from(await assembleNearestKernel()).toString("base64")).toBe(NEAREST_WASM_BASE64);
  });
});

describe("dotProducts (SIMD kernel)", () => {
  it("matches scalar dot products, also after the resident vectors change", () => {
    const vectors = randomDescriptors(500, 64, 5);
    const query = randomDescriptors(1, 64, 6);
    const scalar = (v: Int8Array) =>
      Array.from({ length: v.length / 64 }, (_, j) => query.reduce((sum, q, d) => sum + q * v[j * 64 + d], 0));
    expect(Array.from(dotProducts(query, vectors, 64))).toEqual(scalar(vectors));
    findNearestNeighbours(randomDescriptors(3, 64, 7), randomDescriptors(3, 64, 8), 64);
    expect(Array.from(dotProducts(query, vectors, 64))).toEqual(scalar(vectors));
    const other = randomDescriptors(20, 64, 9);
    expect(Array.from(dotProducts(query, other, 64))).toEqual(scalar(other));
  });
});
