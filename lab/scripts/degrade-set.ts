/**
 * npm run degrade:set -- SRC --out DST [--from-capture 4] [--seed 1]
 * A copy of a labelled set (`npm run synth`) in which every subject's captures from `--from-capture` on (0-based, in
 * name order) are degraded the way real genuine pairs fail (lab/synth/soft-capture.ts). The earlier captures are hard links
 * to the originals, the manifest is copied, file names and geometry are unchanged (so scripts/ground-truth.ts still
 * finds each keypoint's true partner). `npm run eval:pairs -- DST --across 4` then scores only the pairs of one sharp
 * and one degraded capture.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { readLabelledDataset } from "../evaluation/dataset";
import { MANIFEST_FILE } from "../synth/dataset";
import { softCapture, YARDSTICK_SEED } from "../synth/soft-capture";

const { positionals, values } = parseScriptArgs({
  name: "degrade:set",
  description: "A copy of a labelled set whose later captures are blurred (defocus or motion) and darkened: one sharp, one soft.",
  args: "SRC",
  options: {
    out: { type: "string" },
    "from-capture": { type: "string", default: "4" },
    seed: { type: "string", default: String(YARDSTICK_SEED) },
  },
});
const source = positionals[0];
if (!source || !values.out) throw new Error("usage: degrade:set SRC --out DST [--from-capture 4] [--seed 1]");
const target = values.out;
const fromCapture = Number(values["from-capture"]);
const seed = Number(values.seed);

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
      fs.writeFileSync(to, await softCapture(fs.readFileSync(path.join(source, image)), seed, s, c));
      degraded++;
    }
  }
}
process.stderr.write(`${subjects.length} subjects, ${degraded} captures degraded into ${target}\n`);
