/**
 * npm run eval:pairs -- DIR [--impostor-pairs N] [--peer] [--cache FILE]
 * Image pairs of a labelled set, as the real-photo measurement of issue #24 counts them: every genuine pair (any two
 * captures of one subject) and a deterministic spread of N impostor pairs (default 20,000), each scored 0–100 by the
 * engine's single-image score (an image the quality gate refuses is still compared; one without a keypoint → 0). Prints AUC, EER, FNMR at FMR 1 % / 0.1 %, the share of genuine
 * pairs scoring 0, genuine pairs accepted at the decision threshold, the impostors' largest score and the unusable
 * images; with --peer, OpenCV SIFT + ratio test + RANSAC (scripts/peer/) on the same pairs beside it. --cache keeps
 * the templates in FILE (reused while the template format is the same), so matcher changes re-score quickly.
 * --across K: only pairs of one of a subject's first K captures (name order) and one later capture, genuine and
 * impostor alike: on a copy made by `npm run degrade:set -- SRC --out DST --from-capture K`, one sharp and one soft.
 * --quarter-turns: also extracts every image turned by 90°, 180° and 270° (sharp, re-encoded as JPEG at quality 95) and
 * scores each pair a second way, as the best of the second image's four quarter turns: what the matcher's ± 40° reach
 * would make of a nose at any roll, and what trying four turns costs the impostors.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { startProgress } from "@/lib/progress";
import { analyseImage, shutdownEngine, DECISION_THRESHOLD } from "@/lib/biometrics";
import { areaUnderRoc, equalErrorRate, fnmrAtFmr } from "../evaluation/metrics";
import { readLabelledDataset } from "../evaluation/dataset";
import { runSiftPeer } from "../evaluation/sift-peer";
import { compareTemplates, WHOLE_FRAME_HYPOTHESES } from "@/lib/biometrics/pair-matcher";
import { pairScore } from "@/lib/biometrics/scoring";
import { deserializeTemplate, keypointCount, strongestKeypoints, templateVersionOf, type NoseTemplate } from "@/lib/biometrics/template";
import { RERANK_KEYPOINTS } from "@/lib/biometrics/parameters";
import { isUsableQuality } from "@/lib/biometrics/quality";
import { Rng } from "../synth/prng";
import sharp from "sharp";
import { cpuMsSince } from "../bench/stats";

const { positionals, values } = parseScriptArgs({
  name: "eval:pairs",
  description: "Image pairs of a labelled set (all genuine, N impostor) scored by the engine, and with --peer by OpenCV SIFT + RANSAC.",
  args: "DIR",
  options: {
    "impostor-pairs": { type: "string", default: "20000" },
    peer: { type: "boolean" },
    cache: { type: "string" },
    across: { type: "string" },
    "quarter-turns": { type: "boolean" },
  },
});
const root = positionals[0];
if (!root) throw new Error("usage: eval:pairs DIR [--impostor-pairs N] [--peer] [--cache FILE]");
const impostorPairs = Number(values["impostor-pairs"]);
if (!Number.isInteger(impostorPairs) || impostorPairs < 1) throw new Error(`--impostor-pairs must be a positive integer, got "${values["impostor-pairs"]}"`);
const across = values.across === undefined ? null : Number(values.across);
if (across !== null && !(Number.isInteger(across) && across > 0)) throw new Error(`--across must be a positive integer, got "${values.across}"`);
const log = (message: string) => process.stderr.write(`${message}\n`);
const percent = (value: number) => `${(value * 100).toFixed(2)} %`;

interface Pair {
  a: number;
  b: number;
  genuine: boolean;
}

/**
 * Every genuine pair; impostor pairs from a fixed linear congruential walk, so a set always gives the same pairs.
 * With --across, only pairs of an early capture (rank within its subject below K) and a later one.
 */
function choosePairs(subjectOf: readonly number[]): Pair[] {
  const rank = new Array<number>(subjectOf.length).fill(0);
  for (let i = 1; i < rank.length; i++) rank[i] = subjectOf[i] === subjectOf[i - 1] ? rank[i - 1] + 1 : 0;
  const allowed = (a: number, b: number) => across === null || rank[a] < across !== rank[b] < across;
  const pairs: Pair[] = [];
  for (let i = 0; i < subjectOf.length; i++) {
    for (let j = i + 1; j < subjectOf.length && subjectOf[j] === subjectOf[i]; j++) if (allowed(i, j)) pairs.push({ a: i, b: j, genuine: true });
  }
  const seen = new Set<number>();
  let state = 12345;
  // The walk's consecutive draws have tied low bits (capture ranks), so --across draws from mulberry32 instead.
  const spread = new Rng(12345);
  const next = across === null ? () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) % subjectOf.length : () => spread.int(0, subjectOf.length - 1);
  for (let tries = 0; seen.size < impostorPairs && tries < impostorPairs * 20; tries++) {
    const a = next();
    const b = next();
    if (subjectOf[a] === subjectOf[b] || !allowed(a, b)) continue;
    const key = Math.min(a, b) * subjectOf.length + Math.max(a, b);
    if (seen.has(key)) continue;
    seen.add(key);
    pairs.push({ a: Math.min(a, b), b: Math.max(a, b), genuine: false });
  }
  return pairs;
}

async function extractAll(images: string[]): Promise<(Uint8Array | null)[]> {
  const cache = values.cache;
  if (cache && fs.existsSync(cache)) {
    const stored = JSON.parse(fs.readFileSync(cache, "utf8")) as { images: string[]; templates: (string | null)[]; describesUnusable?: boolean };
    const templates = stored.templates.map((t) => (t === null ? null : new Uint8Array(Buffer.from(t, "base64"))));
    const current = templates.find((t) => t !== null);
    const fresh = await analyseImage(fs.readFileSync(path.join(root, images[0])));
    const sameFormat = current && fresh.ok && fresh.template && templateVersionOf(current) === templateVersionOf(fresh.template);
    if (sameFormat && stored.describesUnusable && stored.images.join("\n") === images.join("\n")) {
      log(`templates from ${cache}`);
      return templates;
    }
  }
  const results: (Uint8Array | null)[] = new Array(images.length).fill(null);
  const progress = startProgress("extracting", images.length, (done) => {
    if (done % 400 === 0) log(`  extracted ${done}/${images.length}`);
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < images.length) {
        const index = next++;
        // As `eval pairs` scores them: a photo the quality gate refuses is still compared (decision 0019).
        const analysis = await analyseImage(fs.readFileSync(path.join(root, images[index])), { describeUnusable: true });
        results[index] = analysis.ok ? analysis.template : null;
        progress.tick();
      }
    }),
  );
  progress.stop();
  if (cache) {
    fs.writeFileSync(cache, JSON.stringify({ images, templates: results.map((t) => (t ? Buffer.from(t).toString("base64") : null)), describesUnusable: true }));
  }
  return results;
}

/** Every image turned by 90°, 180° and 270° (in that order), extracted as `extractAll` extracts them. */
async function extractTurned(images: string[]): Promise<(NoseTemplate | null)[][]> {
  const turns = [90, 180, 270];
  const turned = turns.map(() => new Array<NoseTemplate | null>(images.length).fill(null));
  const progress = startProgress("turning", images.length * turns.length, () => undefined);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < images.length * turns.length) {
        const index = next++;
        const [turn, image] = [Math.floor(index / images.length), index % images.length];
        const jpeg = await sharp(fs.readFileSync(path.join(root, images[image]))).rotate(turns[turn]).jpeg({ quality: 95 }).toBuffer();
        const analysis = await analyseImage(jpeg, { describeUnusable: true });
        turned[turn][image] = analysis.ok && analysis.template ? deserializeTemplate(analysis.template) : null;
        progress.tick();
      }
    }),
  );
  progress.stop();
  return turned;
}

function report(name: string, pairs: readonly Pair[], scores: readonly number[], zeroMeans: string): void {
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
  const subjects = readLabelledDataset(root);
  const images = subjects.flatMap((s) => s.images);
  const subjectOf = subjects.flatMap((s, k) => s.images.map(() => k));
  const pairs = choosePairs(subjectOf);
  const genuineCount = pairs.filter((p) => p.genuine).length;
  log(`${subjects.length} subjects, ${images.length} images, ${genuineCount} genuine and ${pairs.length - genuineCount} impostor pairs`);
  const started = performance.now();
  const serialized = await extractAll(images);
  const turned = values["quarter-turns"] ? await extractTurned(images) : null;
  await shutdownEngine();
  log(`extraction ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const templates: (NoseTemplate | null)[] = serialized.map((t) => (t ? deserializeTemplate(t) : null));
  const similarities = pairs.map(({ a, b }) => {
    const ta = templates[a];
    const tb = templates[b];
    return ta && tb ? compareTemplates(ta, tb).similarity : 0;
  });
  const scores = similarities.map(pairScore);
  console.log(`data set: ${path.resolve(root)}; ${genuineCount} genuine, ${pairs.length - genuineCount} impostor image pairs`);
  console.log(`images without a template (undecodable, or no keypoint): ${templates.filter((t) => t === null).length} of ${images.length}`);
  console.log(`images the quality gate refuses (compared all the same): ${templates.filter((t) => t !== null && !isUsableQuality(t.quality, keypointCount(t))).length} of ${images.length}`);
  report("Rhinarium score", pairs, scores, "scoring 0");
  report("Rhinarium raw similarity", pairs, similarities, "at 0");
  const accepted = (of: readonly number[]) => {
    const genuine = of.filter((_, k) => pairs[k].genuine);
    return percent(genuine.filter((s) => s >= DECISION_THRESHOLD).length / genuine.length);
  };
  console.log(`genuine pairs accepted at ${DECISION_THRESHOLD}: ${accepted(scores)}`);
  if (turned) {
    const started = process.cpuUsage();
    const best = pairs.map(({ a, b }, k) => {
      const ta = templates[a];
      return ta ? Math.max(similarities[k], ...turned.map((list) => (list[b] ? compareTemplates(ta, list[b]!).similarity : 0))) : 0;
    });
    const cpuMs = cpuMsSince(started);
    report("Rhinarium score, best of four quarter turns", pairs, best.map(pairScore), "scoring 0");
    console.log(
      `genuine pairs accepted at ${DECISION_THRESHOLD}, best of four quarter turns: ${accepted(best.map(pairScore))} ` +
        `(the three turned comparisons: ${(cpuMs / pairs.length).toFixed(2)} ms of CPU a pair)`,
    );
    // The cheaper design of decision 0028: the turn chosen by the light comparison (the 1:N cascade's: RERANK_KEYPOINTS
    // strongest keypoints, WHOLE_FRAME_HYPOTHESES), then only that turn matched in full beside the upright comparison.
    const lightStarted = process.cpuUsage();
    const light = (t: NoseTemplate) => strongestKeypoints(t, RERANK_KEYPOINTS);
    const chosenTurn = pairs.map(({ a, b }) => {
      const ta = templates[a];
      if (!ta) return -1;
      const la = light(ta);
      const sims = turned.map((list) => (list[b] ? compareTemplates(la, light(list[b]!), WHOLE_FRAME_HYPOTHESES).similarity : 0));
      const upright = templates[b] ? compareTemplates(la, light(templates[b]!), WHOLE_FRAME_HYPOTHESES).similarity : 0;
      const top = Math.max(...sims);
      return top > upright ? sims.indexOf(top) : -1;
    });
    const lightMs = cpuMsSince(lightStarted);
    const chosen = pairs.map(({ a, b }, k) => {
      const ta = templates[a];
      const turn = chosenTurn[k];
      return ta && turn >= 0 && turned[turn][b] ? Math.max(similarities[k], compareTemplates(ta, turned[turn][b]!).similarity) : similarities[k];
    });
    report("Rhinarium score, the upright and the light comparison's turn", pairs, chosen.map(pairScore), "scoring 0");
    const picked = chosenTurn.filter((turn) => turn >= 0).length;
    console.log(
      `genuine pairs accepted at ${DECISION_THRESHOLD}, the upright and the light comparison's turn: ${accepted(chosen.map(pairScore))} ` +
        `(the light comparisons of four turns: ${(lightMs / pairs.length).toFixed(2)} ms of CPU a pair; a turn other than upright chosen for ${percent(picked / pairs.length)} of pairs)`,
    );
  }
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
