/**
 * npm run fold:descriptor -- NET.rdn PATCHES.bin --dims 64 --out FILE [--records 60000]
 * Shortens a trained descriptor network's output (scripts/train-descriptor.py writes 128 dimensions) to its `--dims`
 * principal directions: the unit descriptors of the first `--records` training records' patches (both patches of
 * each; an RPP1 file from `npm run export:patches`) give a second-moment matrix, its leading eigenvectors P project
 * the output, and P is folded into the final linear layer (W ← P W, b ← P b), so the network itself gives the
 * shorter descriptor at less cost. Unit normalisation after the layer is unchanged, so the folded network's
 * descriptor is the projection of the original's, normalised again. The check patches' expected outputs are
 * projected the same way, and the written file is parsed back (which runs those checks) before it is kept.
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { describePatch, parseDescriptorNet } from "../lib/biometrics/descriptor-net";
import { PATCH_PIXELS, PATCH_QUANT } from "../lib/biometrics/patches";

const { positionals, values } = parseArgs({
  allowPositionals: true,
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

/** Eigenvectors of a symmetric matrix by cyclic Jacobi rotations, columns sorted by decreasing eigenvalue. */
function symmetricEigen(matrix: Float64Array, n: number): { values: number[]; vectors: Float64Array } {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  let scale = 0;
  for (let i = 0; i < n * n; i++) scale += a[i] ** 2;
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q] ** 2;
    // Converged once the off-diagonal part is negligible against the whole matrix.
    if (off <= 1e-24 * scale) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p];
          const akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k];
          const aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => a[y * n + y] - a[x * n + x]);
  const vectors = new Float64Array(n * n);
  order.forEach((column, k) => {
    for (let i = 0; i < n; i++) vectors[i * n + k] = v[i * n + column];
  });
  return { values: order.map((i) => a[i * n + i]), vectors };
}

const { values: eigenvalues, vectors } = symmetricEigen(moment, width);
const total = eigenvalues.reduce((sum, x) => sum + x, 0);
const kept = eigenvalues.slice(0, dims).reduce((sum, x) => sum + x, 0);
/** P[k][i]: the k-th principal direction. */
const project = (k: number, i: number) => vectors[i * width + k];

// Rewrite the file: every layer as it is except the last (linear, PyTorch order [out][in]), then the checks.
const view = new DataView(netBytes.buffer, netBytes.byteOffset, netBytes.byteLength);
const parts: Uint8Array[] = [netBytes.subarray(0, 8)];
let at = 8;
const layerCount = view.getUint32(4, true);
for (let l = 0; l < layerCount; l++) {
  const kind = view.getUint8(at);
  const inputs = view.getUint32(at + 4, true);
  const outputs = view.getUint32(at + 8, true);
  const weightCount = outputs * inputs * (kind === 1 ? 9 : 1);
  const end = at + 12 + 4 * (weightCount + outputs);
  if (l < layerCount - 1) {
    parts.push(netBytes.subarray(at, end));
  } else {
    if (kind !== 2 || outputs !== width) throw new Error("the network's last layer must be the linear output layer");
    const folded = new DataView(new ArrayBuffer(12 + 4 * dims * (inputs + 1)));
    for (let b = 0; b < 4; b++) folded.setUint8(b, view.getUint8(at + b));
    folded.setUint32(4, inputs, true);
    folded.setUint32(8, dims, true);
    const weight = (o: number, i: number) => view.getFloat32(at + 12 + 4 * (o * inputs + i), true);
    const bias = (o: number) => view.getFloat32(at + 12 + 4 * (weightCount + o), true);
    for (let k = 0; k < dims; k++) {
      for (let i = 0; i < inputs; i++) {
        let sum = 0;
        for (let o = 0; o < width; o++) sum += project(k, o) * weight(o, i);
        folded.setFloat32(12 + 4 * (k * inputs + i), sum, true);
      }
      let sum = 0;
      for (let o = 0; o < width; o++) sum += project(k, o) * bias(o);
      folded.setFloat32(12 + 4 * (dims * inputs + k), sum, true);
    }
    parts.push(new Uint8Array(folded.buffer));
  }
  at = end;
}
const checks = view.getUint32(at, true);
at += 4;
const checkPart = new DataView(new ArrayBuffer(4 + checks * 4 * (PATCH_PIXELS + dims)));
checkPart.setUint32(0, checks, true);
for (let c = 0; c < checks; c++) {
  const base = 4 + c * 4 * (PATCH_PIXELS + dims);
  for (let i = 0; i < PATCH_PIXELS; i++) checkPart.setFloat32(base + 4 * i, view.getFloat32(at + 4 * i, true), true);
  const expected = Array.from({ length: width }, (_, o) => view.getFloat32(at + 4 * (PATCH_PIXELS + o), true));
  const projected = Array.from({ length: dims }, (_, k) => expected.reduce((sum, e, o) => sum + project(k, o) * e, 0));
  const norm = Math.hypot(...projected) || 1;
  projected.forEach((p, k) => checkPart.setFloat32(base + 4 * (PATCH_PIXELS + k), p / norm, true));
  at += 4 * (PATCH_PIXELS + width);
}
parts.push(new Uint8Array(checkPart.buffer));
const bytes = Buffer.concat(parts);
parseDescriptorNet(bytes);
fs.writeFileSync(values.out, bytes);
console.log(
  `folded ${netFile} to ${dims} of ${width} dimensions (${((100 * kept) / total).toFixed(1)} % of the second moment of ${2 * records} training descriptors); wrote ${values.out} (${bytes.length} bytes)`,
);
