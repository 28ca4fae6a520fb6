/**
 * npm run export:patches -- DIR --subjects FROM-TO --out FILE [--tolerance-px 3] [--jitter-deg 10] [--upright] [--seed 1]
 *   [--b-root DIR]
 * Training data for the learned descriptor (scripts/train-descriptor.py): for every ordered pair of captures of
 * one nose from different bursts (a synthetic set made by `npm run synth`), every keypoint of the first whose true
 * partner the second's detector also found (scripts/ground-truth.ts) gives one record: the first keypoint's
 * patch in the frame of the true turn (plus a uniform jitter of +-jitter degrees, so the network learns to
 * bear the matcher's rotation hypotheses' error), the partner's patch upright (lib/biometrics/patches.ts).
 * With --upright the first patch is upright too (plus the jitter): the network must bear the whole turn between
 * the captures.
 * With --b-root DIR the second capture of each pair is read from DIR instead: a copy of the set made by
 * `npm run degrade:set` (same manifest, names and geometry), so each record pairs a sharp patch with a soft, dark one.
 * File: "RPP1", u32 record count, then per record i32 subject, int8 patch a, int8 patch b (PATCH_PIXELS each).
 */
import fs from "node:fs";
import { parseScriptArgs } from "@/scripts/script-cli";
import { PATCH_PIXELS, quantisePatch, samplePatch } from "@/lib/biometrics/patches";
import { Rng } from "../synth/prng";
import { loadSubjectCaptures, readManifest, trueTurnDeg, truePartners } from "./ground-truth";

const { positionals, values } = parseScriptArgs({
  name: "export:patches",
  description: "Generator-true keypoint partner patches: the descriptor network's training data.",
  args: "DIR",
  options: {
    subjects: { type: "string" },
    out: { type: "string" },
    "tolerance-px": { type: "string", default: "3" },
    "jitter-deg": { type: "string", default: "10" },
    upright: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    "b-root": { type: "string" },
  },
});
const root = positionals[0];
const range = /^(\d+)-(\d+)$/.exec(values.subjects ?? "");
if (!root || !range || !values.out) throw new Error("usage: export:patches DIR --subjects FROM-TO --out FILE [--tolerance-px 3] [--jitter-deg 10] [--upright] [--seed 1] [--b-root DIR]");
const manifest = readManifest(root);
const [from, to] = [Number(range[1]), Math.min(Number(range[2]), manifest.subjects - 1)];
const jitter = (Number(values["jitter-deg"]) * Math.PI) / 180;
const rng = new Rng(Number(values.seed));

const RECORD_BYTES = 4 + 2 * PATCH_PIXELS;
const chunks: Buffer[] = [];
let records = 0;
const patch = new Float32Array(PATCH_PIXELS);
const started = performance.now();
for (let s = from; s <= to; s++) {
  const captures = await loadSubjectCaptures(root, manifest, s, { levels: true });
  const others = values["b-root"] ? await loadSubjectCaptures(values["b-root"], manifest, s, { levels: true }) : captures;
  for (let ai = 0; ai < captures.length; ai++) {
    for (let bi = 0; bi < captures.length; bi++) {
      const [a, b] = [captures[ai], others[bi]];
      if (a.burst === b.burst) continue;
      const partners = truePartners(a, b, Number(values["tolerance-px"]));
      const turn = values.upright ? 0 : (trueTurnDeg(a, b) * Math.PI) / 180;
      const pairs = [...partners].map((j, i) => [i, j]).filter(([, j]) => j >= 0);
      const chunk = Buffer.alloc(pairs.length * RECORD_BYTES);
      const bytes = new Int8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      pairs.forEach(([i, j], r) => {
        const at = r * RECORD_BYTES;
        chunk.writeInt32LE(s, at);
        const ka = a.keypoints[i];
        samplePatch(a.levels![ka.level].blurred, ka, turn + rng.symmetric(jitter), patch);
        quantisePatch(patch, bytes, at + 4);
        const kb = b.keypoints[j];
        samplePatch(b.levels![kb.level].blurred, kb, 0, patch);
        quantisePatch(patch, bytes, at + 4 + PATCH_PIXELS);
      });
      chunks.push(chunk);
      records += pairs.length;
    }
  }
  process.stderr.write(`\rsubject ${s} of ${from}-${to}: ${records} records, ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
const header = Buffer.alloc(8);
header.write("RPP1", 0, "latin1");
header.writeUInt32LE(records, 4);
fs.writeFileSync(values.out, Buffer.concat([header, ...chunks]));
process.stderr.write(`\nwrote ${records} records to ${values.out}\n`);
