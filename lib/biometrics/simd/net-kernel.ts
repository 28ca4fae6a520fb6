import { NET_KERNEL_WASM_BASE64 } from "./net-kernel-wasm";

const PAGE_BYTES = 65_536;
/** The kernel computes outputs 8 at a time: every layer's outputs are padded with zero weights to a multiple of 8. */
const LANES = 8;

const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(NET_KERNEL_WASM_BASE64, "base64")), {});
const memory = instance.exports.memory as WebAssembly.Memory;
const conv3x3 = instance.exports.conv3x3 as (
  pin: number, size: number, cin: number, pw: number, pb: number, cout: number, stride: number, relu: number, pout: number,
) => void;
const linear = instance.exports.linear as (pin: number, n: number, pw: number, pb: number, nout: number, relu: number, pout: number) => void;

/** A layer as descriptor-net.ts holds it: weights with the outputs innermost (conv [ky][kx][in][out]; linear [in][out], inputs pixel by pixel, channels innermost). */
export interface NetLayer {
  kind: "conv" | "linear";
  stride: number;
  relu: boolean;
  inputs: number;
  outputs: number;
  weights: Float32Array;
  biases: Float32Array;
}

interface PlacedLayer {
  kind: "conv" | "linear";
  stride: number;
  relu: number;
  /** Input channels (conv) or values (linear), as padded by the layer before. */
  inputs: number;
  /** Outputs padded to a multiple of LANES. */
  outputs: number;
  /** Input size (conv). */
  size: number;
  weights: number;
  biases: number;
}

/** A network copied into this thread's kernel memory, with two activation buffers. */
export interface PlacedNet {
  layers: PlacedLayer[];
  outputs: number;
  bufferA: number;
  bufferB: number;
}

let top = 0;
/** Bump allocation in the kernel's memory (networks are placed once per thread and never freed). */
function reserve(bytes: number): number {
  const at = (top + 15) & ~15;
  top = at + bytes;
  if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / PAGE_BYTES));
  return at;
}

const padded = (n: number) => Math.ceil(n / LANES) * LANES;

/** Copies a network's layers into kernel memory, outputs padded to multiples of 8 (padded inputs get zero weights). */
export function placeNet(layers: readonly NetLayer[], inputSize: number): PlacedNet {
  const placed: PlacedLayer[] = [];
  let size = inputSize;
  let channels = 1;
  let channelsPadded = 1;
  let flat = false;
  let largest = inputSize * inputSize;
  for (const layer of layers) {
    const outputs = padded(layer.outputs);
    const taps = layer.kind === "conv" ? 9 : flat ? 1 : size * size;
    const perTap = layer.kind === "conv" ? layer.inputs : flat ? layer.inputs : channels;
    const weights = new Float32Array(taps * channelsPadded * outputs);
    for (let t = 0; t < taps; t++) {
      for (let c = 0; c < perTap; c++) {
        for (let o = 0; o < layer.outputs; o++) weights[(t * channelsPadded + c) * outputs + o] = layer.weights[(t * perTap + c) * layer.outputs + o];
      }
    }
    const biases = new Float32Array(outputs);
    biases.set(layer.biases);
    const pw = reserve(weights.byteLength);
    new Float32Array(memory.buffer, pw, weights.length).set(weights);
    const pb = reserve(biases.byteLength);
    new Float32Array(memory.buffer, pb, biases.length).set(biases);
    placed.push({ kind: layer.kind, stride: layer.stride, relu: layer.relu ? 1 : 0, inputs: layer.kind === "conv" ? channelsPadded : taps * channelsPadded, outputs, size, weights: pw, biases: pb });
    if (layer.kind === "conv") size = Math.ceil(size / layer.stride);
    else flat = true;
    channels = layer.outputs;
    channelsPadded = outputs;
    largest = Math.max(largest, (flat ? 1 : size * size) * outputs);
  }
  return { layers: placed, outputs: channels, bufferA: reserve(largest * 4), bufferB: reserve(largest * 4) };
}

/** The network's raw outputs (before any normalisation) for one input plane of inputSize² values. */
export function runNet(net: PlacedNet, input: Float32Array): Float32Array {
  new Float32Array(memory.buffer, net.bufferA, input.length).set(input);
  let from = net.bufferA;
  let to = net.bufferB;
  for (const layer of net.layers) {
    if (layer.kind === "conv") conv3x3(from, layer.size, layer.inputs, layer.weights, layer.biases, layer.outputs, layer.stride, layer.relu, to);
    else linear(from, layer.inputs, layer.weights, layer.biases, layer.outputs, layer.relu, to);
    [from, to] = [to, from];
  }
  return new Float32Array(memory.buffer.slice(from, from + net.outputs * 4));
}
