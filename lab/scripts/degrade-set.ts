/**
 * npm run degrade:set -- SRC --out DST [--from-capture 4] [--seed 1]
 * A copy of a labelled set (`npm run synth`) in which every subject's captures from `--from-capture` on (0-based, in
 * name order) are degraded the way real genuine pairs fail (docs/engine.md, "The soft-capture yardstick"): at the
 * 320 px working size either a Gaussian defocus of sigma 2–4 px or a motion blur 6–14 px long at any angle, then a
 * darker exposure (grey levels times 0.35–0.65), re-encoded as JPEG quality 85. The earlier captures are hard links
 * to the originals, the manifest is copied, file names and geometry are unchanged (so scripts/ground-truth.ts still
 * finds each keypoint's true partner). `npm run eval:pairs -- DST --across 4` then scores only the pairs of one sharp
 * and one degraded capture. Deterministic: each image's degradation follows from (seed, subject, capture).
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { parseScriptArgs } from "@/scripts/script-cli";
import { readLabelledDataset } from "../evaluation/dataset";
import { MANIFEST_FILE } from "../synth/dataset";
import { hashSeed, Rng } from "../synth/prng";

const { positionals, values } = parseScriptArgs({
  name: "degrade:set",
  description: "A copy of a labelled set whose later captures are blurred (defocus or motion) and darkened: one sharp, one soft.",
  args: "SRC",
  options: {
    out: { type: "string" },
    "from-capture": { type: "string", default: "4" },
    seed: { type: "string", default: "1" },
  },
});
const source = positionals[0];
if (!source || !values.out) throw new Error("usage: degrade:set SRC --out DST [--from-capture 4] [--seed 1]");
const target = values.out;
const fromCapture = Number(values["from-capture"]);
const seed = Number(values.seed);
const WORKING_SIZE = 320;

/** A normalised line kernel `length` px long at `angle`, one px wide (bilinear splats along the line). */
function motionKernel(length: number, angle: number): { width: number; height: number; kernel: number[] } {
  const size = 2 * Math.ceil(length / 2) + 1;
  const kernel = new Array<number>(size * size).fill(0);
  const centre = (size - 1) / 2;
  const steps = Math.ceil(length * 4);
  for (let s = 0; s <= steps; s++) {
    const t = (s / steps - 0.5) * length;
    const x = centre + t * Math.cos(angle);
    const y = centre + t * Math.sin(angle);
    const x0 = Math.floor(x);
    const y0 = Math.floor(y);
    for (const [xi, yi, w] of [
      [x0, y0, (1 - (x - x0)) * (1 - (y - y0))],
      [x0 + 1, y0, (x - x0) * (1 - (y - y0))],
      [x0, y0 + 1, (1 - (x - x0)) * (y - y0)],
      [x0 + 1, y0 + 1, (x - x0) * (y - y0)],
    ]) {
      if (xi >= 0 && xi < size && yi >= 0 && yi < size) kernel[yi * size + xi] += w;
    }
  }
  const total = kernel.reduce((a, b) => a + b, 0);
  return { width: size, height: size, kernel: kernel.map((k) => k / total) };
}

async function degrade(file: string, rng: Rng): Promise<Buffer> {
  const input = sharp(fs.readFileSync(file)).rotate();
  const { width = 0, height = 0 } = await input.metadata();
  const toOriginal = Math.max(width, height) / WORKING_SIZE;
  let image = input;
  if (rng.chance(0.5)) {
    image = image.blur(Math.max(0.3, rng.range(2, 4) * toOriginal));
  } else {
    image = image.convolve(motionKernel(Math.max(2, rng.range(6, 14) * toOriginal), rng.range(0, Math.PI)));
  }
  const gain = rng.range(0.35, 0.65);
  return image.linear(gain, 0).jpeg({ quality: 85 }).toBuffer();
}

fs.mkdirSync(target, { recursive: true });
fs.copyFileSync(path.join(source, MANIFEST_FILE), path.join(target, MANIFEST_FILE));
const subjects = readLabelledDataset(source);
let degraded = 0;
for (const [s, subject] of subjects.entries()) {
  fs.mkdirSync(path.join(target, subject.id), { recursive: true });
  for (const [c, image] of subject.images.entries()) {
    const to = path.join(target, image);
    if (fs.existsSync(to)) fs.rmSync(to);
    if (c < fromCapture) {
      fs.linkSync(path.join(source, image), to);
    } else {
      fs.writeFileSync(to, await degrade(path.join(source, image), new Rng(hashSeed(seed, s, c))));
      degraded++;
    }
  }
}
process.stderr.write(`${subjects.length} subjects, ${degraded} captures degraded into ${target}\n`);
