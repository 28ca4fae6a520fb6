import { describe, expect, it } from "vitest";
import { Rng } from "@/lab/synth/prng";
import { patchFrame, samplePatch } from "../patches";
import { int16Limit, placeImage, placeNet, runNet, runNetOnPatch, type NetLayer } from "./net-kernel";

/** The same network in plain float64, straight from the layer definitions (weights outputs innermost, as NetLayer). */
function reference(layers: NetLayer[], size: number, plane: Float32Array): number[] {
  const mean = plane.reduce((s, v) => s + v, 0) / plane.length;
  const std = Math.sqrt(Math.max(0, plane.reduce((s, v) => s + v * v, 0) / plane.length - mean * mean)) + 1e-6;
  let values = Array.from(plane, (v) => (v - mean) / std);
  let channels = 1;
  for (const layer of layers) {
    const out: number[] = [];
    if (layer.kind === "conv") {
      const outSize = Math.ceil(size / layer.stride);
      for (let oy = 0; oy < outSize; oy++) {
        for (let ox = 0; ox < outSize; ox++) {
          for (let o = 0; o < layer.outputs; o++) {
            let sum = layer.biases[o];
            for (let ky = 0; ky < 3; ky++) {
              for (let kx = 0; kx < 3; kx++) {
                const iy = oy * layer.stride + ky - 1;
                const ix = ox * layer.stride + kx - 1;
                if (iy < 0 || iy >= size || ix < 0 || ix >= size) continue;
                for (let c = 0; c < channels; c++) sum += values[(iy * size + ix) * channels + c] * layer.weights[((ky * 3 + kx) * channels + c) * layer.outputs + o];
              }
            }
            out.push(layer.relu ? Math.max(0, sum) : sum);
          }
        }
      }
      size = outSize;
    } else {
      for (let o = 0; o < layer.outputs; o++) {
        let sum = layer.biases[o];
        for (let i = 0; i < layer.inputs; i++) sum += values[i] * layer.weights[i * layer.outputs + o];
        out.push(layer.relu ? Math.max(0, sum) : sum);
      }
    }
    values = out;
    channels = layer.outputs;
  }
  return values;
}

function randomLayer(rng: Rng, kind: "conv" | "linear", stride: number, inputs: number, outputs: number, taps: number): NetLayer {
  const weights = Float32Array.from({ length: taps * inputs * outputs }, () => rng.symmetric(1) / Math.sqrt(taps * inputs));
  return { kind, stride, relu: kind === "conv", inputs: kind === "conv" ? inputs : taps * inputs, outputs, weights, biases: Float32Array.from({ length: outputs }, () => rng.symmetric(0.1)) };
}

describe("descriptor network kernel (int16)", () => {
  it("bounds values so that no int32 sum can overflow", () => {
    for (const terms of [2, 18, 144, 288, 576, 1024, 4096]) {
      const limit = int16Limit(terms);
      expect(limit).toBeLessThanOrEqual(32767);
      expect(limit * limit * terms).toBeLessThan(2 ** 31);
      expect((limit + 2) ** 2 * terms).toBeGreaterThan(2 ** 31 / 4);
    }
  });

  it("computes what the layers define, to int16 rounding: odd channel counts, both strides, borders, channels-innermost linear input", () => {
    const rng = new Rng(7);
    // 16 x 16 -> conv 5 (stride 1) -> conv 12 (stride 2, 8 x 8) -> conv 20 (stride 2, 4 x 4) -> linear 320 -> 9
    const layers = [
      randomLayer(rng, "conv", 1, 1, 5, 9),
      randomLayer(rng, "conv", 2, 5, 12, 9),
      randomLayer(rng, "conv", 2, 12, 20, 9),
      randomLayer(rng, "linear", 1, 20, 9, 16),
    ];
    const placed = placeNet(layers, 16);
    for (let trial = 0; trial < 5; trial++) {
      const plane = Float32Array.from({ length: 256 }, () => rng.symmetric(50) + 100);
      const want = reference(layers, 16, plane);
      const got = runNet(placed, plane);
      const scale = Math.max(...want.map(Math.abs));
      expect(got.length).toBe(9);
      want.forEach((v, i) => expect(Math.abs(got[i] - v)).toBeLessThan(2e-3 * scale));
    }
  });

  it("gives a flat plane the biases' outputs (nothing divided by zero)", () => {
    const rng = new Rng(3);
    const layers = [randomLayer(rng, "conv", 2, 1, 4, 9), randomLayer(rng, "linear", 1, 4, 3, 64)];
    const got = runNet(placeNet(layers, 16), new Float32Array(256).fill(42));
    const want = reference(layers, 16, new Float32Array(256).fill(42));
    want.forEach((v, i) => expect(got[i]).toBeCloseTo(v, 4));
  });
});

describe("patches sampled in the kernel (runNetOnPatch)", () => {
  const rng = new Rng(11);
  // A 16 x 16 network: what matters here is that its input is the same patch, bit for bit.
  const layers = [randomLayer(rng, "conv", 2, 1, 8, 9), randomLayer(rng, "conv", 2, 8, 16, 9), randomLayer(rng, "linear", 1, 16, 12, 16)];
  const net = placeNet(layers, 16);

  it("gives what runNet gives on samplePatch's patch: inside, clamped at every border, turned, odd sizes", () => {
    for (const [width, height] of [[258, 320], [97, 61]]) {
      const data = Float32Array.from({ length: width * height }, () => rng.symmetric(3));
      const image = placeImage(0, data, width, height);
      const patch = new Float32Array(256);
      const keypoints = [
        { x: width / 2, y: height / 2, sigma: 2.5 },
        { x: 1, y: 2, sigma: 4.9 },
        { x: width - 2, y: height - 1, sigma: 6.9 },
        { x: 3, y: height - 3, sigma: 3.5 },
        ...Array.from({ length: 20 }, () => ({ x: Math.floor(rng.next() * width), y: Math.floor(rng.next() * height), sigma: 2 + rng.next() * 5 })),
      ];
      for (const keypoint of keypoints) {
        for (const angle of [0, 0.35, -0.7, Math.PI / 2]) {
          samplePatch({ width, height, data }, keypoint, angle, patch);
          const expected = Array.from(runNet(net, patch));
          expect(Array.from(runNetOnPatch(net, image, keypoint.x, keypoint.y, patchFrame(keypoint, angle, width, height)))).toEqual(expected);
        }
      }
    }
  });

  it("survives the kernel's memory growing after the network was placed (a larger image placed later)", () => {
    const plane = Float32Array.from({ length: 256 }, () => rng.symmetric(50));
    const before = Array.from(runNet(net, plane));
    placeImage(1, new Float32Array(640 * 640), 640, 640);
    expect(Array.from(runNet(net, plane))).toEqual(before);
  });
});
