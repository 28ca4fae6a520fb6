import fs from "node:fs";
import { DESCRIPTOR_DIMS } from "./parameters";
import { PATCH_PIXELS, PATCH_SIZE, patchFrame } from "./patches";
import { placeNet, runNet, runNetOnPatch, type NetLayer, type PlacedImage, type PlacedNet } from "./simd/net-kernel";

/**
 * A small convolutional descriptor network (trained by `npm run train:descriptor`, lab/scripts/train-descriptor.py):
 * a standardised PATCH_SIZE² patch through 3 x 3 convolutions (padding 1, stride 1 or 2, ReLU) and a final linear
 * layer, ending in a unit vector. Inference is 16-bit integer arithmetic with exact int32 sums (simd/net-kernel.ts:
 * weights per output and activations per layer and patch scaled to the int16 range), within about 1e-4 of the
 * trainer's float32; the weights file carries check patches with the trainer's own outputs, and loading refuses
 * a file this code does not reproduce to CHECK_TOLERANCE.
 *
 * File layout (little-endian): "RDN1", u32 layer count; per layer u8 kind (1 conv 3 x 3, 2 linear), u8 stride,
 * u8 relu, u8 0, u32 inputs, u32 outputs, f32 weights (PyTorch order: out, in, ky, kx), f32 biases; then u32 check
 * count, and per check PATCH_PIXELS f32 inputs (raw patch) and `outputs` f32 expected outputs. The first layer
 * must be a convolution of the patch.
 */

const MAGIC = "RDN1";
const CHECK_TOLERANCE = 1e-3;

/**
 * Layers hold their weights in the order inference reads them, outputs innermost: conv [ky][kx][in][out]; linear
 * [in][out], with the inputs in the activations' order (pixel by pixel, channels innermost) rather than PyTorch's
 * flattening (channel by channel).
 */
type Layer = NetLayer;

export interface DescriptorNet {
  layers: Layer[];
  outputs: number;
}

export class DescriptorNetFormatError extends Error {}

/** Each network's copy in this thread's kernel memory. */
const placedNets = new WeakMap<DescriptorNet, PlacedNet>();

function placedNet(net: DescriptorNet): PlacedNet {
  let placed = placedNets.get(net);
  if (!placed) placedNets.set(net, (placed = placeNet(net.layers, PATCH_SIZE)));
  return placed;
}

/** The L2 norm of a network's raw outputs (1 for all zeros). */
function outputNorm(activations: Float32Array): number {
  let norm = 0;
  for (let i = 0; i < activations.length; i++) norm += activations[i] * activations[i];
  return Math.sqrt(norm) || 1;
}

/** The network's unit-length descriptor of one raw patch (PATCH_PIXELS values from `offset`). */
export function describePatch(net: DescriptorNet, patch: Float32Array, offset = 0): Float32Array {
  const activations = runNet(placedNet(net), patch, offset);
  const norm = outputNorm(activations);
  const descriptor = new Float32Array(activations.length);
  for (let i = 0; i < activations.length; i++) descriptor[i] = activations[i] / norm;
  return descriptor;
}

/**
 * describePatch's descriptor, quantised as `Math.round(component x quant)` (each component rounded to float32
 * first, as describePatch stores it), of the patch that `samplePatch` would take from a placed image (the kernel
 * samples it: `runNetOnPatch`), written into `out` from `at` without allocating.
 */
export function describeImagePatchQuantised(
  net: DescriptorNet,
  image: PlacedImage,
  keypoint: { x: number; y: number; sigma: number },
  angle: number,
  quant: number,
  out: Int8Array,
  at: number,
): void {
  const activations = runNetOnPatch(placedNet(net), image, keypoint.x, keypoint.y, patchFrame(keypoint, angle, image.width, image.height));
  const norm = outputNorm(activations);
  for (let i = 0; i < activations.length; i++) out[at + i] = Math.round(Math.fround(activations[i] / norm) * quant);
}

/** PyTorch's conv weights [out][in][ky][kx] as [ky][kx][in][out]. */
function convWeightsForInference(w: Float32Array, inputs: number, outputs: number): Float32Array {
  const out = new Float32Array(w.length);
  for (let o = 0; o < outputs; o++) for (let c = 0; c < inputs; c++) for (let k = 0; k < 9; k++) out[(k * inputs + c) * outputs + o] = w[(o * inputs + c) * 9 + k];
  return out;
}

/** PyTorch's linear weights [out][in] as [in][out], the inputs of a flattened feature map (channels x size x size) taken pixel by pixel. */
function linearWeightsForInference(w: Float32Array, inputs: number, outputs: number, channels: number, size: number): Float32Array {
  const out = new Float32Array(w.length);
  for (let o = 0; o < outputs; o++) {
    for (let i = 0; i < inputs; i++) {
      const [c, pixel] = size === 1 ? [i, 0] : [Math.floor(i / (size * size)), i % (size * size)];
      out[(pixel * channels + c) * outputs + o] = w[o * inputs + i];
    }
  }
  return out;
}

/** A layer as the file stores it: NetLayer's fields, but kind 1 (conv 3 x 3) or 2 (linear) and weights in PyTorch's order. */
export type DescriptorNetFileLayer = Omit<NetLayer, "kind"> & { kind: number };

/** A weights file's contents, unchecked: its layers and its check patches with the trainer's outputs. */
export interface DescriptorNetFile {
  layers: DescriptorNetFileLayer[];
  checks: { patch: Float32Array; expected: Float32Array }[];
}

const weightCount = (layer: Pick<DescriptorNetFileLayer, "kind" | "inputs" | "outputs">) => layer.outputs * layer.inputs * (layer.kind === 1 ? 9 : 1);

/** Reads the file layout (header above) without checking that the layers make a network. */
export function readDescriptorNetFile(bytes: Uint8Array): DescriptorNetFile {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.byteLength) throw new DescriptorNetFormatError("descriptor net: file truncated");
  };
  const u32 = () => (need(4), (at += 4), view.getUint32(at - 4, true));
  const u8 = () => (need(1), (at += 1), view.getUint8(at - 1));
  const f32s = (n: number) => {
    need(n * 4);
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = view.getFloat32(at + i * 4, true);
    at += n * 4;
    return out;
  };
  need(4);
  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) throw new DescriptorNetFormatError("descriptor net: not an RDN1 file");
  at = 4;
  const layers: DescriptorNetFileLayer[] = [];
  for (let l = u32(); l > 0; l--) {
    const kind = u8();
    const stride = u8();
    const relu = u8() === 1;
    u8();
    const inputs = u32();
    const outputs = u32();
    layers.push({ kind, stride, relu, inputs, outputs, weights: f32s(weightCount({ kind, inputs, outputs })), biases: f32s(outputs) });
  }
  const outputs = layers.at(-1)?.outputs ?? 0;
  const checks: DescriptorNetFile["checks"] = [];
  for (let c = u32(); c > 0; c--) checks.push({ patch: f32s(PATCH_PIXELS), expected: f32s(outputs) });
  if (at !== bytes.byteLength) throw new DescriptorNetFormatError("descriptor net: trailing bytes");
  return { layers, checks };
}

/** The file's bytes (the inverse of readDescriptorNetFile). */
export function writeDescriptorNetFile(file: DescriptorNetFile): Uint8Array {
  const floats = (values: Float32Array) => new Uint8Array(Float32Array.from(values).buffer);
  const u32 = (value: number) => new Uint8Array(Uint32Array.of(value).buffer);
  const parts: Uint8Array[] = [new TextEncoder().encode(MAGIC), u32(file.layers.length)];
  for (const layer of file.layers) {
    if (layer.weights.length !== weightCount(layer) || layer.biases.length !== layer.outputs) throw new RangeError("descriptor net: a layer's weights do not match its shape");
    parts.push(Uint8Array.of(layer.kind, layer.stride, layer.relu ? 1 : 0, 0), u32(layer.inputs), u32(layer.outputs), floats(layer.weights), floats(layer.biases));
  }
  parts.push(u32(file.checks.length));
  for (const check of file.checks) parts.push(floats(check.patch), floats(check.expected));
  const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/** Parses and checks a weights file: its layers must chain (PATCH_SIZE² in, 1 channel) and reproduce its check outputs. */
export function parseDescriptorNet(bytes: Uint8Array): DescriptorNet {
  const file = readDescriptorNetFile(bytes);
  const layers: Layer[] = [];
  let channels = 1;
  let size = PATCH_SIZE;
  let flat = false;
  for (const { kind: code, stride, relu, inputs, outputs, weights, biases } of file.layers) {
    const kind = code === 1 ? "conv" : "linear";
    if (kind === "conv") {
      if (flat || inputs !== channels || (stride !== 1 && stride !== 2)) throw new DescriptorNetFormatError("descriptor net: layers do not chain");
      // The kernel computes output pixels two at a time along a row (simd/net-kernel.wat).
      if (Math.ceil(size / stride) % 2 !== 0) throw new DescriptorNetFormatError("descriptor net: a convolution's output side must be even");
      layers.push({ kind, stride, relu, inputs, outputs, weights: convWeightsForInference(weights, inputs, outputs), biases });
      size = Math.ceil(size / stride);
    } else {
      if (layers.length === 0) throw new DescriptorNetFormatError("descriptor net: the first layer must be a convolution of the patch");
      if (inputs !== (flat ? channels : channels * size * size)) throw new DescriptorNetFormatError("descriptor net: layers do not chain");
      layers.push({ kind, stride, relu, inputs, outputs, weights: linearWeightsForInference(weights, inputs, outputs, flat ? inputs : channels, flat ? 1 : size), biases });
      flat = true;
    }
    channels = outputs;
  }
  if (!flat) throw new DescriptorNetFormatError("descriptor net: no linear output layer");
  const net: DescriptorNet = { layers, outputs: channels };
  if (file.checks.length === 0) throw new DescriptorNetFormatError("descriptor net: no check patches");
  file.checks.forEach(({ patch, expected }, c) => {
    const got = describePatch(net, patch);
    for (let i = 0; i < net.outputs; i++) {
      if (Math.abs(got[i] - expected[i]) > CHECK_TOLERANCE) {
        throw new DescriptorNetFormatError(`descriptor net: check patch ${c} output ${i} is ${got[i]}, the trainer computed ${expected[i]}`);
      }
    }
  });
  return net;
}

/** The engine's network, trained by `npm run train:descriptor` (docs/engine.md); changing it changes templates (bump TEMPLATE_VERSION). */
export const DESCRIPTOR_NET_FILE = new URL("./descriptor-net.rdn", import.meta.url);

let loaded: DescriptorNet | null = null;

/** The engine's descriptor network, loaded and checked on first use in each thread. */
export function descriptorNet(): DescriptorNet {
  if (!loaded) {
    const net = parseDescriptorNet(fs.readFileSync(DESCRIPTOR_NET_FILE));
    if (net.outputs !== DESCRIPTOR_DIMS) throw new DescriptorNetFormatError(`descriptor net: ${net.outputs} outputs, the engine's descriptors have ${DESCRIPTOR_DIMS}`);
    loaded = net;
  }
  return loaded;
}
