import { growMemoryTo } from "./memory";
import { NET_KERNEL_WASM_BASE64 } from "./net-kernel-wasm";

/** The kernel computes outputs 16 at a time: every layer's outputs are padded with zero weights to a multiple of 16. */
const LANES = 16;
/** No int32 sum may pass this: |input| x |weight| x terms stays below it (net-kernel.wat sums exactly in int32). */
const SUM_LIMIT = 2 ** 31;
/** int16 holds at most this magnitude. */
const INT16_LIMIT = 2 ** 15 - 1;

const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(NET_KERNEL_WASM_BASE64, "base64")), {});
const memory = instance.exports.memory as WebAssembly.Memory;
const conv3x3 = instance.exports.conv3x3 as (pin: number, size: number, cin: number, pw: number, cout: number, stride: number, pz: number, pout: number) => void;
const convPlane = instance.exports.convPlane as (pin: number, size: number, pw: number, cout: number, stride: number, pout: number) => void;
const linear = instance.exports.linear as (pin: number, n: number, pw: number, nout: number, pout: number) => void;
const dequantise = instance.exports.dequantise as (pacc: number, pixels: number, cout: number, ps: number, pb: number, xscale: number, relu: number, pout: number) => number;
const quantise = instance.exports.quantise as (pf: number, n: number, max: number, limit: number, pq: number) => number;
const standardise = instance.exports.standardise as (pplane: number, size: number, pinput: number, pstd: number) => number;
const samplePatchKernel = instance.exports.samplePatch as (
  pimg: number, width: number, height: number, kx: number, ky: number, cos: number, sin: number, inside: number, size: number, pout: number,
) => void;

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
  /** "plane": the first layer, a convolution of the single input plane (convPlane). */
  kind: "plane" | "conv" | "linear";
  stride: number;
  relu: number;
  /** Input channels (conv) or values (linear), as padded (even; the layer before pads to LANES). */
  inputs: number;
  /** Outputs padded to a multiple of LANES. */
  outputs: number;
  /** Input size (conv). */
  size: number;
  /** Largest int16 magnitude of this layer's inputs and weights, so that no int32 sum can overflow. */
  limit: number;
  /** int16 weights: conv [tap][pair][out][2], linear [pair][out][2], plane [tap row][2 pairs][out][2]. */
  weights: number;
  /** float32 per output: one weight step's value. */
  scales: number;
  biases: number;
}

/** A network copied into this thread's kernel memory, with its buffers. */
export interface PlacedNet {
  layers: PlacedLayer[];
  outputs: number;
  /** The input plane's side. */
  inputSize: number;
  /** Byte offset of the float32 input plane with the zero border that convPlane reads (row stride inputSize + 4); only the image part is ever written. */
  input: number;
  /** Its length in values. */
  inputValues: number;
  /** The raw float32 plane (inputSize² values, row by row) that `standardise` reads: a copied plane or a sampled patch. */
  plane: number;
  /** One float64: the plane's standard deviation, as `standardise` leaves it. */
  std: number;
  /** float32 outputs of the latest layer. */
  floats: number;
  /** int16 inputs of the next layer. */
  ints: number;
  /** Zero inputs for taps outside the image. */
  zeros: number;
}

let top = 0;
/** Bump allocation in the kernel's memory (networks are placed once per thread and never freed). */
function reserve(bytes: number): number {
  const at = (top + 15) & ~15;
  top = at + bytes;
  growMemoryTo(memory, top);
  return at;
}

const padded = (n: number) => Math.ceil(n / LANES) * LANES;

/** The largest magnitude a layer's int16 inputs and weights may take when each output sums `terms` products. */
export function int16Limit(terms: number): number {
  return Math.min(INT16_LIMIT, Math.floor(Math.sqrt(SUM_LIMIT / terms)) - 1);
}

function copyInto<T extends Float32Array | Int16Array>(values: T): number {
  const at = reserve(values.byteLength);
  new (values.constructor as new (b: ArrayBuffer, o: number, n: number) => T)(memory.buffer, at, values.length).set(values);
  return at;
}

/**
 * Copies a network's layers into kernel memory as int16: inputs in pairs (padded with a zero input where odd),
 * outputs padded to multiples of 16 with zero weights, each output's weights scaled so that its largest reaches the
 * layer's limit (int16Limit).
 */
export function placeNet(layers: readonly NetLayer[], inputSize: number): PlacedNet {
  if (layers[0]?.kind !== "conv" || layers[0].inputs !== 1) throw new Error("net kernel: the first layer must be a convolution of the input plane");
  const placed: PlacedLayer[] = [];
  let size = inputSize;
  let channels = 1;
  let channelsPadded = 1;
  let flat = false;
  let largest = 0;
  for (const [l, layer] of layers.entries()) {
    const kind = l === 0 ? "plane" : layer.kind;
    const outputs = padded(layer.outputs);
    const taps = layer.kind === "conv" ? 9 : flat ? 1 : size * size;
    const perTap = layer.kind === "conv" ? layer.inputs : flat ? layer.inputs : channels;
    // The plane's 3 tap rows are read as 2 pairs each (the last with a zero weight).
    const terms = kind === "plane" ? 12 : taps * channelsPadded;
    const limit = int16Limit(terms);
    /** Index of the int16 weight of tap t, input c in the kernel's order (outputs innermost, inputs in pairs). */
    const slot = (t: number, c: number) => (kind === "plane" ? 4 * Math.floor(t / 3) + (t % 3) : t * channelsPadded + c);
    const weights = new Int16Array(terms * outputs);
    const scales = new Float32Array(outputs);
    for (let o = 0; o < layer.outputs; o++) {
      let max = 0;
      for (let t = 0; t < taps; t++) for (let c = 0; c < perTap; c++) max = Math.max(max, Math.abs(layer.weights[(t * perTap + c) * layer.outputs + o]));
      const scale = max > 0 ? limit / max : 0;
      scales[o] = max > 0 ? max / limit : 0;
      for (let t = 0; t < taps; t++) {
        for (let c = 0; c < perTap; c++) {
          const input = slot(t, c);
          weights[((input >> 1) * outputs + o) * 2 + (input & 1)] = Math.round(layer.weights[(t * perTap + c) * layer.outputs + o] * scale);
        }
      }
    }
    const biases = new Float32Array(outputs);
    biases.set(layer.biases);
    placed.push({
      kind,
      stride: layer.stride,
      relu: layer.relu ? 1 : 0,
      inputs: layer.kind === "conv" ? channelsPadded : terms,
      outputs,
      size,
      limit,
      weights: copyInto(weights),
      scales: copyInto(scales),
      biases: copyInto(biases),
    });
    if (layer.kind === "conv") {
      size = Math.ceil(size / layer.stride);
      if (size % 2 !== 0) throw new Error(`net kernel: a convolution's output size must be even, not ${size}`);
    } else flat = true;
    channels = layer.outputs;
    channelsPadded = outputs;
    largest = Math.max(largest, (flat ? 1 : size * size) * outputs);
  }
  const planeValues = padded((inputSize + 4) * (inputSize + 2));
  largest = Math.max(largest, planeValues);
  // Kernel memory is zero where reserve() first hands it out: the border stays zero.
  const input = reserve(planeValues * 4);
  return {
    layers: placed,
    outputs: channels,
    inputSize,
    input,
    inputValues: planeValues,
    plane: reserve(inputSize * inputSize * 4),
    std: reserve(8),
    floats: reserve(largest * 4),
    ints: reserve(largest * 2),
    // conv3x3 reads one pixel's channels of zeros for a tap outside the image.
    zeros: reserve(Math.max(0, ...placed.filter((l) => l.kind === "conv").map((l) => l.inputs)) * 2),
  };
}

/**
 * The network's raw outputs (before any normalisation; a view of kernel memory, valid until the next call) for one input plane (`inputSize²` values of `plane` from
 * `offset`, row by row), standardised first to mean 0 and standard deviation 1 (+ 1e-6), as the trainer does.
 */
export function runNet(net: PlacedNet, plane: Float32Array, offset = 0): Float32Array {
  const n = net.inputSize * net.inputSize;
  new Float32Array(memory.buffer, net.plane, n).set(plane.subarray(offset, offset + n));
  return forward(net);
}

/** An image copied into kernel memory for `runNetOnPatch` (its own slot's region, reused by the next image placed there). */
export interface PlacedImage {
  readonly at: number;
  readonly width: number;
  readonly height: number;
}

const imageSlots: { at: number; bytes: number }[] = [];

/** Copies an image into slot `slot` (a region kept per slot, grown when an image does not fit): valid until the slot's next placement. */
export function placeImage(slot: number, data: Float32Array, width: number, height: number): PlacedImage {
  // samplePatch's bilinear reads never pass the last pixel (clamped to width - 1.001), so no slack is needed.
  const bytes = width * height * 4;
  if (!imageSlots[slot] || imageSlots[slot].bytes < bytes) imageSlots[slot] = { at: reserve(bytes), bytes };
  new Float32Array(memory.buffer, imageSlots[slot].at, width * height).set(data.subarray(0, width * height));
  return { at: imageSlots[slot].at, width, height };
}

/**
 * The network's raw outputs (as runNet) for the patch of a placed image that patches.ts `samplePatch` would sample
 * with this frame (`patchFrame`): sampled and standardised in kernel memory, bit for bit the same.
 */
export function runNetOnPatch(net: PlacedNet, image: PlacedImage, x: number, y: number, frame: { cos: number; sin: number; inside: boolean }): Float32Array {
  samplePatchKernel(image.at, image.width, image.height, x, y, frame.cos, frame.sin, frame.inside ? 1 : 0, net.inputSize, net.plane);
  return forward(net);
}

/** The layers over the plane at net.plane, standardised first (kernel `standardise`). */
function forward(net: PlacedNet): Float32Array {
  const size = net.inputSize;
  let max = standardise(net.plane, size, net.input, net.std);
  const std = new Float64Array(memory.buffer, net.std, 1)[0];
  // The standardised plane's int16 steps are the centred plane's divided by std.
  let xscale = quantise(net.input, net.inputValues, max, net.layers[0].limit, net.ints) / std;
  let count = 0;
  for (let l = 0; l < net.layers.length; l++) {
    const layer = net.layers[l];
    if (l > 0) xscale = quantise(net.floats, count, max, layer.limit, net.ints);
    let pixels = 1;
    if (layer.kind === "linear") {
      linear(net.ints, layer.inputs, layer.weights, layer.outputs, net.floats);
    } else {
      if (layer.kind === "plane") convPlane(net.ints, layer.size, layer.weights, layer.outputs, layer.stride, net.floats);
      else conv3x3(net.ints, layer.size, layer.inputs, layer.weights, layer.outputs, layer.stride, net.zeros, net.floats);
      const side = Math.ceil(layer.size / layer.stride);
      pixels = side * side;
    }
    max = dequantise(net.floats, pixels, layer.outputs, layer.scales, layer.biases, xscale, layer.relu, net.floats);
    count = pixels * layer.outputs;
  }
  return new Float32Array(memory.buffer, net.floats, net.outputs);
}
