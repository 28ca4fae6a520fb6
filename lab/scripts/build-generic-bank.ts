/**
 * npm run build:generic-bank -- DIR [DIR...] [--size 4096] [--seed 11]
 * Samples `size` upright keypoint descriptors, evenly over the subjects' first captures of every DIR, into
 * lib/biometrics/generic-bank.bin: the bank against which extraction measures each keypoint's genericness
 * (distinctiveness.ts). Use sets generated with seeds no evaluation uses, of both settings (hard crops inside
 * the pad, normal photos frame the whole nose), so the bank holds what every nose shares. Bump TEMPLATE_VERSION
 * when it changes.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { decodeNoseImage } from "@/lib/biometrics/decode";
import { GENERIC_BANK_FILE, serializeGenericBank } from "@/lib/biometrics/distinctiveness";
import { normaliseContrast } from "@/lib/biometrics/enhance";
import { readLabelledDataset } from "../evaluation/dataset";
import { descriptorFrame, extractLocalFeatures } from "@/lib/biometrics/features";
import { DESCRIPTOR_DIMS } from "@/lib/biometrics/parameters";
import { Rng } from "../synth/prng";

const { positionals, values } = parseScriptArgs({
  name: "build:generic-bank",
  description: "Samples upright keypoint descriptors of the sets' first captures into lib/biometrics/generic-bank.bin (bump the template format).",
  args: "DIR [DIR...]",
  options: { size: { type: "string", default: "4096" }, seed: { type: "string", default: "11" } },
});
if (positionals.length === 0) throw new Error("usage: build:generic-bank DIR [DIR...] [--size 4096] [--seed 11]");
const size = Number(values.size);

const random = new Rng(Number(values.seed));

const pool: Int8Array[] = [];
let images = 0;
for (const root of positionals) {
  for (const subject of readLabelledDataset(root)) {
    const { image } = await decodeNoseImage(fs.readFileSync(path.join(root, subject.images[0])));
    const { keypoints, descriptors } = extractLocalFeatures(normaliseContrast(image), image, 1); // the upright frame only
    const upright = descriptorFrame(descriptors, keypoints.length, 0);
    for (let k = 0; k < keypoints.length; k++) pool.push(upright.subarray(k * DESCRIPTOR_DIMS, (k + 1) * DESCRIPTOR_DIMS));
    images++;
  }
}
if (pool.length < size) throw new Error(`only ${pool.length} descriptors in ${images} images; ask for fewer`);
// A seeded partial Fisher–Yates shuffle: the first `size` entries are a uniform sample.
for (let i = 0; i < size; i++) {
  const j = i + Math.floor(random.next() * (pool.length - i));
  [pool[i], pool[j]] = [pool[j], pool[i]];
}
const bank = new Int8Array(size * DESCRIPTOR_DIMS);
for (let i = 0; i < size; i++) bank.set(pool[i], i * DESCRIPTOR_DIMS);
const target = GENERIC_BANK_FILE.pathname;
fs.writeFileSync(target, serializeGenericBank(bank));
console.log(`sampled ${size} of ${pool.length} upright descriptors from ${images} images of ${positionals.map((p) => path.basename(path.resolve(p))).join(", ")}`);
console.log(`wrote ${target}`);
