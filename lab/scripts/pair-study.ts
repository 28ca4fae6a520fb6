/**
 * npm run eval:pairs -- DIR [--impostor-pairs N] [--peer] [--cache FILE] [--across K]
 * Image pairs of a labelled set, as the real-photo measurement of issue #24 counts them: every genuine pair (any two
 * captures of one subject) and a deterministic spread of N impostor pairs (default 20,000), each scored 0–100 by the
 * engine's single-image score as `eval pairs` gives it: a pair the upright comparison does not accept also tries its
 * first image's quarter turns (decision 0032); an image the quality gate refuses is still compared, one without a
 * keypoint → 0. Prints AUC, EER, FNMR at FMR 1 % / 0.1 %, the share of genuine pairs scoring 0, genuine pairs accepted
 * at the decision threshold, the impostors' largest score and the unusable images, as scored and upright only; with
 * --peer, OpenCV SIFT + ratio test + RANSAC (scripts/peer/) on the same pairs beside it. --cache keeps the templates in
 * FILE (reused while the template format is the same), so matcher changes re-score without extracting again.
 * --across K: only pairs of one of a subject's first K captures (name order) and one later capture, genuine and
 * impostor alike: on a copy made by `npm run degrade:set -- SRC --out DST --from-capture K`, one sharp and one soft.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { DECISION_THRESHOLD } from "@/lib/biometrics";
import { areaUnderRoc, equalErrorRate, fnmrAtFmr } from "../evaluation/metrics";
import { runImagePairs, type LabelledPair } from "../evaluation/image-pairs";
import { runSiftPeer } from "../evaluation/sift-peer";
import { pairScore } from "@/lib/biometrics/scoring";
import { deserializeTemplate, keypointCount } from "@/lib/biometrics/template";
import { isUsableQuality } from "@/lib/biometrics/quality";

const { positionals, values } = parseScriptArgs({
  name: "eval:pairs",
  description: "Image pairs of a labelled set (all genuine, N impostor) scored by the engine, and with --peer by OpenCV SIFT + RANSAC.",
  args: "DIR",
  options: {
    "impostor-pairs": { type: "string", default: "20000" },
    peer: { type: "boolean" },
    cache: { type: "string" },
    across: { type: "string" },
  },
});
const root = positionals[0];
if (!root) throw new Error("usage: eval:pairs DIR [--impostor-pairs N] [--peer] [--cache FILE]");
const impostorPairs = Number(values["impostor-pairs"]);
if (!Number.isInteger(impostorPairs) || impostorPairs < 1) throw new Error(`--impostor-pairs must be a positive integer, got "${values["impostor-pairs"]}"`);
const across = values.across === undefined ? null : Number(values.across);
if (across !== null && !(Number.isInteger(across) && across > 0)) throw new Error(`--across must be a positive integer, got "${values.across}"`);
const percent = (value: number) => `${(value * 100).toFixed(2)} %`;

function report(name: string, pairs: readonly LabelledPair[], scores: readonly number[], zeroMeans: string): void {
  const genuine = scores.filter((_, k) => pairs[k].genuine);
  const impostor = scores.filter((_, k) => !pairs[k].genuine);
  const at = (fmr: number) => fnmrAtFmr(genuine, impostor, fmr);
  console.log(
    `${name}: AUC ${areaUnderRoc(genuine, impostor).toFixed(4)}, EER ${percent(equalErrorRate(genuine, impostor).eer)}, ` +
      `FNMR at FMR 1 % ${percent(at(0.01).fnmr)} (threshold ${at(0.01).threshold}), at 0.1 % ${percent(at(0.001).fnmr)} (threshold ${at(0.001).threshold}), ` +
      `genuine ${zeroMeans} ${percent(genuine.filter((s) => s <= 0).length / genuine.length)}, impostor max ${Math.max(...impostor)}`,
  );
}

async function main(): Promise<void> {
  const { images, pairs, templates: serialized, upright, scored, msPerPair } = await runImagePairs(root, { impostorPairs, across, cache: values.cache });
  const genuineCount = pairs.filter((p) => p.genuine).length;
  const templates = serialized.map((t) => (t ? deserializeTemplate(t) : null));
  console.log(`data set: ${path.resolve(root)}; ${genuineCount} genuine, ${pairs.length - genuineCount} impostor image pairs`);
  console.log(`images without a template (undecodable, or no keypoint): ${templates.filter((t) => t === null).length} of ${images.length}`);
  console.log(`images the quality gate refuses (compared all the same): ${templates.filter((t) => t !== null && !isUsableQuality(t.quality, keypointCount(t))).length} of ${images.length}`);
  const accepted = (of: readonly number[]) => {
    const genuine = of.filter((_, k) => pairs[k].genuine);
    return percent(genuine.filter((s) => s >= DECISION_THRESHOLD).length / genuine.length);
  };
  const scores = Array.from(scored, pairScore);
  const uprightScores = Array.from(upright, pairScore);
  report("Rhinarium score", pairs, scores, "scoring 0");
  report("Rhinarium raw similarity", pairs, Array.from(scored), "at 0");
  console.log(`genuine pairs accepted at ${DECISION_THRESHOLD}: ${accepted(scores)} (${msPerPair.toFixed(2)} ms of worker time a pair)`);
  const turned = pairs.filter((_, k) => scored[k] > upright[k]);
  console.log(`pairs a quarter turn scored higher than upright: ${turned.filter((p) => p.genuine).length} genuine, ${turned.filter((p) => !p.genuine).length} impostor`);
  report("Rhinarium score, upright only", pairs, uprightScores, "scoring 0");
  console.log(`genuine pairs accepted at ${DECISION_THRESHOLD}, upright only: ${accepted(uprightScores)}`);
  if (values.peer) {
    const csv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pairs-")), "pairs.csv");
    fs.writeFileSync(csv, `a,b\n${pairs.map((p) => `${images[p.a]},${images[p.b]}`).join("\n")}\n`);
    const peer = await runSiftPeer({ pairsCsv: csv, root });
    report(`OpenCV SIFT + ratio + RANSAC (inliers; ${peer.timings.threads} threads)`, pairs, peer.scores.map((s) => s.score), "with 0 inliers");
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
