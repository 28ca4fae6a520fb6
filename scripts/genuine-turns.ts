/**
 * npm run eval:turns -- DIR EVALUATION.json [--threshold 40] [--within 30]
 * For a synthetic set and the evaluation.json that `npm run eval -- DIR` wrote for it: how the genuine sessions
 * that score below the threshold relate to the generator's true rotation between probe and enrolled captures.
 * For each enrolled subject (in the protocol's order: captures 0-4 enrolled, 5-7 probes) it counts the 15
 * probe-enrolled image pairs whose true relative turn is within `--within` degrees (the 1:N first stage, and the
 * matcher before its +-40 degree hypotheses, reach about +-30) and prints how many failing and passing sessions have few.
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { planCapture } from "../lib/synth/capture";
import { burstLayout, captureSeed, subjectSeed } from "../lib/synth/dataset";
import { createNoseSubject } from "../lib/synth/nose-surface";
import { readManifest } from "./ground-truth";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { threshold: { type: "string", default: "40" }, within: { type: "string", default: "30" } },
});
const [root, evaluationFile] = positionals;
if (!root || !evaluationFile) throw new Error("usage: eval:turns DIR EVALUATION.json [--threshold 40] [--within 30]");
const manifest = readManifest(root);
const genuine = (JSON.parse(fs.readFileSync(evaluationFile, "utf8")) as { genuine: number[] }).genuine;
const threshold = Number(values.threshold);
const within = Number(values.within);

const sessions = genuine.map((score, s) => {
  const seed = subjectSeed(manifest.seed, s);
  const subject = createNoseSubject(seed);
  const bursts = burstLayout(seed, manifest.captures, manifest.difficulty);
  const turnDeg = Array.from({ length: 8 }, (_, c) => {
    const burst = bursts[c];
    return (planCapture(subject, captureSeed(seed, c), { difficulty: manifest.difficulty, ...(burst ? { burst } : {}) }).rotation * 180) / Math.PI;
  });
  let pairsWithin = 0;
  for (let p = 5; p < 8; p++) for (let e = 0; e < 5; e++) if (Math.abs(turnDeg[p] - turnDeg[e]) <= within) pairsWithin++;
  return { s, score, pairsWithin };
});
const failing = sessions.filter((r) => r.score < threshold);
console.log(`${sessions.length} genuine sessions, ${failing.length} below ${threshold}`);
for (const most of [0, 2, 4]) {
  const few = sessions.filter((r) => r.pairsWithin <= most);
  console.log(`sessions with at most ${most} of 15 pairs turned within ${within} degrees: ${few.length}, of them below ${threshold}: ${few.filter((r) => r.score < threshold).length}`);
}
console.log(`below ${threshold} (subject: score, pairs within): ${failing.sort((a, b) => a.score - b.score).map((r) => `${r.s}: ${r.score}, ${r.pairsWithin}`).join("; ")}`);
