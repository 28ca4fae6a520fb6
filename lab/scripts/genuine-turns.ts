/**
 * npm run eval:turns -- DIR EVALUATION.json [--threshold 40] [--within 30]
 * For a synthetic set and the evaluation.json that `npm run eval -- DIR` wrote for it: how the genuine sessions
 * that score below the threshold relate to the generator's true rotation between probe and enrolled captures.
 * For each enrolled subject (in the protocol's order: the first MIN_ENROL_IMAGES captures enrolled, the next
 * MIN_PROBE_IMAGES probes) it counts the probe-enrolled image pairs whose true relative turn is within `--within`
 * degrees (the 1:N first stage, and the matcher before its +-40 degree hypotheses, reach about +-30) and prints how
 * many failing and passing sessions have few. The genuine scores are taken to be the set's subjects in order, which
 * holds only when every subject enrolled: the command refuses an evaluation with failures to enrol.
 */
import fs from "node:fs";
import { parseScriptArgs } from "@/scripts/script-cli";
import { MIN_ENROL_IMAGES, MIN_PROBE_IMAGES } from "@/lib/biometrics/parameters";
import { capturePlans, readManifest } from "./ground-truth";

const { positionals, values } = parseScriptArgs({
  name: "eval:turns",
  description: "The genuine sessions scored below the threshold against the generator's true rotation between probe and enrolled captures.",
  args: "DIR EVALUATION.json",
  options: { threshold: { type: "string", default: "40" }, within: { type: "string", default: "30" } },
});
const [root, evaluationFile] = positionals;
if (!root || !evaluationFile) throw new Error("usage: eval:turns DIR EVALUATION.json [--threshold 40] [--within 30]");
const manifest = readManifest(root);
const evaluation = JSON.parse(fs.readFileSync(evaluationFile, "utf8")) as { genuine: number[]; figures: { failureToEnrol: number } };
if (evaluation.figures.failureToEnrol > 0) throw new Error("eval:turns: some subjects failed to enrol, so genuine scores no longer line up with subjects");
if (manifest.captures < MIN_ENROL_IMAGES + MIN_PROBE_IMAGES) throw new Error(`eval:turns: the protocol needs ${MIN_ENROL_IMAGES + MIN_PROBE_IMAGES} captures a subject`);
const threshold = Number(values.threshold);
const within = Number(values.within);
const pairCount = MIN_ENROL_IMAGES * MIN_PROBE_IMAGES;

const sessions = evaluation.genuine.map((score, s) => {
  const turnDeg = capturePlans(manifest, s).map(({ plan }) => (plan.rotation * 180) / Math.PI);
  let pairsWithin = 0;
  for (let p = MIN_ENROL_IMAGES; p < MIN_ENROL_IMAGES + MIN_PROBE_IMAGES; p++) {
    for (let e = 0; e < MIN_ENROL_IMAGES; e++) if (Math.abs(turnDeg[p] - turnDeg[e]) <= within) pairsWithin++;
  }
  return { s, score, pairsWithin };
});
const failing = sessions.filter((r) => r.score < threshold);
console.log(`${sessions.length} genuine sessions, ${failing.length} below ${threshold}`);
for (const most of [0, 2, 4]) {
  const few = sessions.filter((r) => r.pairsWithin <= most);
  console.log(`sessions with at most ${most} of ${pairCount} pairs turned within ${within} degrees: ${few.length}, of them below ${threshold}: ${few.filter((r) => r.score < threshold).length}`);
}
console.log(`below ${threshold} (subject: score, pairs within): ${failing.sort((a, b) => a.score - b.score).map((r) => `${r.s}: ${r.score}, ${r.pairsWithin}`).join("; ")}`);
