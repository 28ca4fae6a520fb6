/**
 * npm run fold:descriptor -- NET.rdn PATCHES.bin --dims 64 --out FILE [--records 60000]
 * Shortens a trained descriptor network's output (lab/scripts/train-descriptor.py writes 128 dimensions) to its `--dims`
 * principal directions: the unit descriptors of the first `--records` training records' patches (both patches of
 * each; an RPP1 file from `npm run export:patches`) give a second-moment matrix, its leading eigenvectors P project
 * the output, and P is folded into the final linear layer (W ← P W, b ← P b), so the network itself gives the
 * shorter descriptor at less cost. Unit normalisation after the layer is unchanged, so the folded network's
 * descriptor is the projection of the original's, normalised again. The check patches' expected outputs are
 * projected the same way, and the written file is parsed back (which runs those checks) before it is kept.
 */
import fs from "node:fs";
import { parseScriptArgs } from "@/scripts/script-cli";
import { describePatch, parseDescriptorNet, readDescriptorNetFile, writeDescriptorNetFile } from "@/lib/biometrics/descriptor-net";
import { PATCH_PIXELS, PATCH_QUANT } from "@/lib/biometrics/patches";
import { symmetricEigen } from "../evaluation/symmetric-eigen";

const { positionals, values } = parseScriptArgs({
  name: "fold:descriptor",
  description: "Folds a trained descriptor network's output to its leading principal directions into its last layer.",
  args: "NET.rdn PATCHES.bin",
  options: { dims: { type: "string", default: "64" }, out: { type: "string" }, records: { type: "string", default: "60000" } },
});
const [netFile, patchesFile] = positionals;
if (!netFile || !patchesFile || !values.out) throw new Error("usage: fold:descriptor NET.rdn PATCHES.bin --dims 64 --out FILE [--records 60000]");
const dims = Number(values.dims);

const netBytes = new Uint8Array(fs.readFileSync(netFile));
const net = parseDescriptorNet(netBytes);
const width = net.outputs;
if (!(dims > 0 && dims < width && dims % 16 === 0)) throw new Error(`--dims must be a multiple of 16 below the network's ${width}`);

// Second moment of the network's unit descriptors over the training patches.
const patches = fs.readFileSync(patchesFile);
if (patches.toString("latin1", 0, 4) !== "RPP1") throw new Error(`${patchesFile}: not an RPP1 file`);
const recordBytes = 4 + 2 * PATCH_PIXELS;
const records = Math.min(Number(values.records), patches.readUInt32LE(4));
const moment = new Float64Array(width * width);
const patch = new Float32Array(PATCH_PIXELS);
for (let r = 0; r < records; r++) {
  for (let side = 0; side < 2; side++) {
    const at = 8 + r * recordBytes + 4 + side * PATCH_PIXELS;
    for (let i = 0; i < PATCH_PIXELS; i++) patch[i] = patches.readInt8(at + i) / PATCH_QUANT;
    const d = describePatch(net, patch);
    for (let i = 0; i < width; i++) for (let j = 0; j <= i; j++) moment[i * width + j] += d[i] * d[j];
  }
}
for (let i = 0; i < width; i++) for (let j = 0; j < i; j++) moment[j * width + i] = moment[i * width + j];

const { values: eigenvalues, vectors } = symmetricEigen(moment, width);
const total = eigenvalues.reduce((sum, x) => sum + x, 0);
const kept = eigenvalues.slice(0, dims).reduce((sum, x) => sum + x, 0);
/** P[k][i]: the k-th principal direction. */
const project = (k: number, i: number) => vectors[i * width + k];

// The same file with the last layer (linear, PyTorch order [out][in]) and the check outputs projected.
const file = readDescriptorNetFile(netBytes);
const last = file.layers.at(-1)!;
if (last.kind !== 2 || last.outputs !== width) throw new Error("the network's last layer must be the linear output layer");
const weights = new Float32Array(dims * last.inputs);
const biases = new Float32Array(dims);
for (let k = 0; k < dims; k++) {
  for (let i = 0; i < last.inputs; i++) {
    let sum = 0;
    for (let o = 0; o < width; o++) sum += project(k, o) * last.weights[o * last.inputs + i];
    weights[k * last.inputs + i] = sum;
  }
  let sum = 0;
  for (let o = 0; o < width; o++) sum += project(k, o) * last.biases[o];
  biases[k] = sum;
}
const checks = file.checks.map(({ patch, expected }) => {
  const projected = Array.from({ length: dims }, (_, k) => expected.reduce((sum, e, o) => sum + project(k, o) * e, 0));
  const norm = Math.hypot(...projected) || 1;
  return { patch, expected: Float32Array.from(projected, (p) => p / norm) };
});
const bytes = writeDescriptorNetFile({ layers: [...file.layers.slice(0, -1), { ...last, outputs: dims, weights, biases }], checks });
parseDescriptorNet(bytes);
fs.writeFileSync(values.out, bytes);
console.log(
  `folded ${netFile} to ${dims} of ${width} dimensions (${((100 * kept) / total).toFixed(1)} % of the second moment of ${2 * records} training descriptors); wrote ${values.out} (${bytes.length} bytes)`,
);
