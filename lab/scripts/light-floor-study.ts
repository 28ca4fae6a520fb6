/**
 * npm run eval:light-floor -- [--cache DIR] [--settings hard,real] [--impostors 400]
 * A light floor for the cascade's deep pass (a light similarity under which no pet is matched in full), studied on the identification bench's cached templates
 * (`npm run bench -- --only identification` writes them to DIR): for each setting's enrolled subjects, their probe
 * (captures 5–7) against their own enrolment (captures 0–4), and every probe (enrolled subjects' and unknown animals')
 * against other pets: the other subjects' enrolments and `--impostors` pets mixed from the distractor pool as the bench
 * mixes them. Prints the light raw similarity of the genuine pairs, the smallest ones of the pairs the full matcher
 * accepts, the light raw a pet at the decision threshold would have by their smallest light / full ratio, and how the
 * highest light raw a probe meets among impostors is spread: a probe whose every candidate stays under a floor would end
 * its deep pass without full matching (docs/decisions/0018). Prints figures only.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { readTemplateCache } from "../bench/identification";
import { usableTemplates as usable } from "../evaluation/subject-cache";
import { compareSessions } from "@/lib/biometrics/session-matcher";
import { DECISION_THRESHOLD, sessionScore } from "@/lib/biometrics/scoring";
import { RERANK_KEYPOINTS, TEMPLATE_VERSION } from "@/lib/biometrics/parameters";
import { deserializeTemplate, strongestKeypoints, type NoseTemplate } from "@/lib/biometrics/template";
import { Rng } from "../synth/prng";

const { values } = parseScriptArgs({
  name: "eval:light-floor",
  description: "The light similarity of genuine and impostor pets in the 1:N deep pass, on the identification bench's cached templates.",
  options: {
    cache: { type: "string", default: path.join(os.tmpdir(), "rhinarium-bench-cache") },
    settings: { type: "string", default: "hard,real" },
    impostors: { type: "string", default: "400" },
  },
});

/** The bench's cached templates, decoded (null: an unusable image). */
const readCache = (file: string) => readTemplateCache(file).map((bytes) => (bytes ? deserializeTemplate(bytes) : null));

const cacheFile = (prefix: string) => {
  const name = fs.readdirSync(values.cache).find((f) => f.startsWith(prefix) && f.endsWith(`-v${TEMPLATE_VERSION}.bin`));
  if (!name) throw new Error(`no ${prefix}*-v${TEMPLATE_VERSION}.bin in ${values.cache}: run npm run bench -- --only identification first`);
  return path.join(values.cache, name);
};
const light = (templates: readonly NoseTemplate[]) => templates.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS));
const pool = usable(readCache(cacheFile("distractors-")));
const rng = new Rng(777);
const mixed = Array.from({ length: Number(values.impostors) }, () => Array.from({ length: 5 }, () => pool[Math.floor(rng.next() * pool.length)]));
const lightMixed = mixed.map(light);
const quantiles = (values: number[], qs: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return qs.map((q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2)).join(" / ");
};

/** The smallest session raw similarity the full matcher accepts (to 0.01). */
let thresholdRaw = 0;
while (sessionScore(thresholdRaw) < DECISION_THRESHOLD) thresholdRaw += 0.01;
console.log(`Light comparison on ${RERANK_KEYPOINTS} keypoints, ${mixed.length} mixed impostor pets`);
let acceptedLightMin = Infinity;
for (const setting of values.settings.split(",")) {
  const templates = readCache(cacheFile(`probes-${setting}-`));
  const subjects = templates.length / 8;
  const enrolled = Array.from({ length: subjects }, (_, s) => usable(templates.slice(s * 8, s * 8 + 5)));
  const probes = Array.from({ length: subjects }, (_, s) => usable(templates.slice(s * 8 + 5, s * 8 + 8)));
  // The bench's split: the last 20 subjects are never enrolled.
  const genuineSubjects = subjects - 20;
  const genuine: { light: number; full: number }[] = [];
  const topImpostorLight: number[] = [];
  for (let s = 0; s < subjects; s++) {
    if (probes[s].length < 2) continue;
    const lightProbe = light(probes[s]);
    if (s < genuineSubjects && enrolled[s].length >= 3) {
      const pair = { light: compareSessions(lightProbe, light(enrolled[s])).raw, full: compareSessions(probes[s], enrolled[s]).raw };
      genuine.push(pair);
      if (sessionScore(pair.full) >= DECISION_THRESHOLD) acceptedLightMin = Math.min(acceptedLightMin, pair.light);
    }
    let top = 0;
    for (let o = 0; o < genuineSubjects; o++) {
      if (o === s || enrolled[o].length < 3) continue;
      const raw = compareSessions(lightProbe, light(enrolled[o])).raw;
      top = Math.max(top, raw);
    }
    for (const pet of lightMixed) top = Math.max(top, compareSessions(lightProbe, pet).raw);
    topImpostorLight.push(top);
  }
  const accepted = genuine.filter((pair) => sessionScore(pair.full) >= DECISION_THRESHOLD);
  console.log(`\n${setting}: ${genuine.length} genuine pairs, ${accepted.length} accepted in full`);
  console.log(`  genuine light raw, min / 1 % / 5 % / 50 %: ${quantiles(genuine.map((p) => p.light), [0, 0.01, 0.05, 0.5])}`);
  console.log(`  accepted genuine pairs' light raw, the five smallest: ${accepted.map((p) => p.light).sort((a, b) => a - b).slice(0, 5).map((v) => v.toFixed(2)).join(", ")}`);
  // The light similarity a pet at the decision threshold would have, by the smallest light / full ratio of the genuine pairs.
  const ratios = accepted.map((p) => p.light / p.full).sort((a, b) => a - b);
  console.log(`  light / full raw of the accepted genuine pairs, the five smallest: ${ratios.slice(0, 5).map((v) => v.toFixed(3)).join(", ")}; the decision threshold's raw ${thresholdRaw.toFixed(2)} times the smallest: ${(thresholdRaw * ratios[0]).toFixed(2)}`);
  console.log(`  highest impostor light raw a probe meets, min / 10 % / 25 % / 50 % / 90 % / max: ${quantiles(topImpostorLight, [0, 0.1, 0.25, 0.5, 0.9, 1])}`);
}
console.log(`\nsmallest light raw of a genuine pair the full matcher accepts: ${acceptedLightMin.toFixed(2)}`);
