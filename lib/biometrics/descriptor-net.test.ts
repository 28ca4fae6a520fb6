import { describe, expect, it } from "vitest";
import { createGreyImage } from "./grey-image";
import { DescriptorNetFormatError, describePatch, parseDescriptorNet, readDescriptorNetFile, writeDescriptorNetFile } from "./descriptor-net";
import { PATCH_PIXELS, PATCH_SIZE, PATCH_WINDOW_SIGMAS, samplePatch } from "./patches";

describe("samplePatch", () => {
  // Bilinear sampling is exact on a linear image, so every sample can be worked out by hand.
  const ramp = createGreyImage(100, 80, Float32Array.from({ length: 100 * 80 }, (_, i) => i % 100));
  const keypoint = { x: 50, y: 40, sigma: 2 };
  const step = (PATCH_WINDOW_SIGMAS * keypoint.sigma) / PATCH_SIZE;

  it("samples the descriptor window row by row, upright", () => {
    const patch = new Float32Array(PATCH_PIXELS);
    samplePatch(ramp, keypoint, 0, patch);
    for (const [i, j] of [[0, 0], [15, 0], [7, 9], [3, 15]]) expect(patch[j * PATCH_SIZE + i]).toBeCloseTo(50 + (i - 7.5) * step, 4);
  });

  it("turns the frame by the angle (the convention of the rotation hypotheses): at 90 degrees the patch's rows run along x", () => {
    const patch = new Float32Array(PATCH_PIXELS);
    samplePatch(ramp, keypoint, Math.PI / 2, patch);
    for (const [i, j] of [[0, 0], [15, 2], [7, 9], [3, 15]]) expect(patch[j * PATCH_SIZE + i]).toBeCloseTo(50 - (j - 7.5) * step, 4);
  });
});

interface LayerSpec {
  kind: number;
  stride: number;
  relu: number;
  inputs: number;
  outputs: number;
  weights: number[];
  biases: number[];
}

/** An RDN1 file of these layers with one check patch. */
function rdn1(layers: LayerSpec[], patch: Float32Array, expected: number[]): Uint8Array {
  const parts: number[][] = [];
  const u32 = (v: number) => parts.push([...new Uint8Array(Uint32Array.of(v).buffer)]);
  const f32 = (values: ArrayLike<number>) => parts.push([...new Uint8Array(Float32Array.from(values).buffer)]);
  parts.push([..."RDN1"].map((c) => c.charCodeAt(0)));
  u32(layers.length);
  for (const layer of layers) {
    parts.push([layer.kind, layer.stride, layer.relu, 0]);
    u32(layer.inputs);
    u32(layer.outputs);
    f32(layer.weights);
    f32(layer.biases);
  }
  u32(1);
  f32(patch);
  f32(expected);
  return Uint8Array.from(parts.flat());
}

/** An RDN1 file: one identity 3 x 3 convolution of stride 2 with ReLU, then a linear layer 64 -> 2 (sum, first input). */
function tinyNet(checkOutput?: (patch: Float32Array) => number[]): Uint8Array {
  const patch = Float32Array.from({ length: PATCH_PIXELS }, (_, i) => Math.sin(i * 0.7) * 3 + 10);
  return rdn1(
    [
      { kind: 1, stride: 2, relu: 1, inputs: 1, outputs: 1, weights: [0, 0, 0, 0, 1, 0, 0, 0, 0], biases: [0] },
      { kind: 2, stride: 1, relu: 0, inputs: 64, outputs: 2, weights: [...Array.from({ length: 64 }, () => 1), 1, ...Array.from({ length: 63 }, () => 0)], biases: [0, 0] },
    ],
    patch,
    checkOutput ? checkOutput(patch) : expectedTiny(patch),
  );
}

/** What tinyNet computes, worked out directly: standardise, keep the even rows and columns, ReLU, (sum, first), unit length. */
function expectedTiny(patch: Float32Array): number[] {
  const mean = patch.reduce((s, v) => s + v, 0) / PATCH_PIXELS;
  const std = Math.sqrt(patch.reduce((s, v) => s + (v - mean) ** 2, 0) / PATCH_PIXELS) + 1e-6;
  const kept: number[] = [];
  for (let y = 0; y < PATCH_SIZE; y += 2) for (let x = 0; x < PATCH_SIZE; x += 2) kept.push(Math.max(0, (patch[y * PATCH_SIZE + x] - mean) / std));
  const out = [kept.reduce((s, v) => s + v, 0), kept[0]];
  const norm = Math.hypot(out[0], out[1]);
  return out.map((v) => v / norm);
}

describe("descriptor network file", () => {
  it("loads a file whose check outputs it reproduces, and describes patches as the layers say", () => {
    const net = parseDescriptorNet(tinyNet());
    expect(net.outputs).toBe(2);
    const patch = Float32Array.from({ length: PATCH_PIXELS }, (_, i) => ((i * 37) % 11) - 4);
    const got = describePatch(net, patch);
    // The kernel's int16 arithmetic (simd/net-kernel.wat) rounds to about 1e-4 of each layer's largest value.
    expectedTiny(patch).forEach((v, i) => expect(got[i]).toBeCloseTo(v, 3));
  });

  it("reads PyTorch's channel-by-channel flattening into the linear layer", () => {
    // Conv 1 -> 2, stride 2: channel 0 the patch, channel 1 its negative (ReLU keeps each sign's part). Linear 128 -> 2:
    // output 0 is flattened input 64 (channel 1, pixel 0), output 1 is input 1 (channel 0, pixel 1).
    const patch = Float32Array.from({ length: PATCH_PIXELS }, (_, i) => (i === 0 ? -5 : i === 2 ? 7 : (i % 5) - 2));
    const mean = patch.reduce((s, v) => s + v, 0) / PATCH_PIXELS;
    const std = Math.sqrt(patch.reduce((s, v) => s + (v - mean) ** 2, 0) / PATCH_PIXELS) + 1e-6;
    const raw = [Math.max(0, -(patch[0] - mean) / std), Math.max(0, (patch[2] - mean) / std)];
    const expected = raw.map((v) => v / Math.hypot(raw[0], raw[1]));
    const file = rdn1(
      [
        { kind: 1, stride: 2, relu: 1, inputs: 1, outputs: 2, weights: [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0], biases: [0, 0] },
        { kind: 2, stride: 1, relu: 0, inputs: 128, outputs: 2, weights: Array.from({ length: 256 }, (_, i) => (i === 64 || i === 128 + 1 ? 1 : 0)), biases: [0, 0] },
      ],
      patch,
      expected,
    );
    const got = describePatch(parseDescriptorNet(file), patch);
    expected.forEach((v, i) => expect(got[i]).toBeCloseTo(v, 3));
  });

  it("refuses a file whose check outputs it does not reproduce, a truncated file and another format", () => {
    expect(() => parseDescriptorNet(tinyNet((patch) => expectedTiny(patch).map((v, i) => (i === 1 ? v + 0.01 : v))))).toThrow(DescriptorNetFormatError);
    const good = tinyNet();
    expect(() => parseDescriptorNet(good.subarray(0, good.length - 3))).toThrow(DescriptorNetFormatError);
    expect(() => parseDescriptorNet(Uint8Array.from([...good, 0]))).toThrow(/trailing/);
    expect(() => parseDescriptorNet(Uint8Array.from([0x52, 0x44, 0x4e, 0x32, ...good.subarray(4)]))).toThrow(/not an RDN1/);
  });

  it("reads and writes the file layout back to the same bytes (what fold:descriptor rewrites)", () => {
    const bytes = tinyNet();
    const file = readDescriptorNetFile(bytes);
    expect(file.layers.map((l) => [l.kind, l.stride, l.relu, l.inputs, l.outputs])).toEqual([[1, 2, true, 1, 1], [2, 1, false, 64, 2]]);
    expect(file.checks).toHaveLength(1);
    expect(writeDescriptorNetFile(file)).toEqual(bytes);
    const wrongShape = { ...file, layers: [file.layers[0], { ...file.layers[1], outputs: 3 }] };
    expect(() => writeDescriptorNetFile(wrongShape)).toThrow(/do not match its shape/);
  });

  it("refuses layers the kernel cannot run: a linear first layer, a convolution with an odd output side", () => {
    const patch = new Float32Array(PATCH_PIXELS).fill(1);
    const linearFirst = rdn1([{ kind: 2, stride: 1, relu: 0, inputs: PATCH_PIXELS, outputs: 2, weights: Array.from({ length: 2 * PATCH_PIXELS }, () => 0), biases: [1, 0] }], patch, [1, 0]);
    expect(() => parseDescriptorNet(linearFirst)).toThrow(/first layer must be a convolution/);
    // 16 -> 8 -> 4 -> 2 -> 1: the fourth stride-2 convolution leaves one pixel.
    const conv = { kind: 1, stride: 2, relu: 1, inputs: 1, outputs: 1, weights: [0, 0, 0, 0, 1, 0, 0, 0, 0], biases: [0] };
    const oddSide = rdn1([conv, conv, conv, conv, { kind: 2, stride: 1, relu: 0, inputs: 1, outputs: 2, weights: [1, 0], biases: [0, 1] }], patch, [0, 1]);
    expect(() => parseDescriptorNet(oddSide)).toThrow(/output side must be even/);
  });
});
