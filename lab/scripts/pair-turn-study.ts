/**
 * npm run eval:pair-turns -- DIR [--impostor-pairs N] [--cache FILE]
 * Which of a single pair's quarter turns to match in full (decision 0032): `eval:pairs`' pairs of DIR, each pair not
 * accepted upright compared at its first image's three quarter turns both in full and lightly (the cascade's light
 * comparison: RERANK_KEYPOINTS strongest keypoints, whole-frame hypotheses), then scored by several rules on the raw
 * similarity: upright only, the best of four (today's `compareImagePair`), only the turns whose light comparison
 * reaches a floor, and the one turn the light comparison ranks first. Prints AUC, FNMR at FMR 1 % / 0.1 %, the genuine
 * pairs the table accepts at 40 and the share of impostor pairs a floor lets through. One thread: minutes a set.
 * --cache keeps the templates in FILE, as `eval:pairs --cache` does (the same file serves both).
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { shutdownEngine } from "@/lib/biometrics";
import { triesQuarterTurns } from "@/lib/biometrics/scoring";
import { compareTemplates, WHOLE_FRAME_HYPOTHESES } from "@/lib/biometrics/pair-matcher";
import { RERANK_KEYPOINTS } from "@/lib/biometrics/parameters";
import { DECISION_THRESHOLD, pairScore } from "@/lib/biometrics/scoring";
import { deserializeTemplate, strongestKeypoints, type NoseTemplate } from "@/lib/biometrics/template";
import { quarterTurnViews } from "@/lib/biometrics/turns";
import { readLabelledDataset } from "../evaluation/dataset";
import { chooseImagePairs, pairTemplates } from "../evaluation/image-pairs";
import { areaUnderRoc, fnmrAtFmr } from "../evaluation/metrics";

const { positionals, values } = parseScriptArgs({
  name: "eval:pair-turns",
  description: "Scores a set's image pairs by several rules for choosing a single pair's quarter turns.",
  args: "DIR",
  options: { "impostor-pairs": { type: "string", default: "20000" }, cache: { type: "string" } },
});
const root = positionals[0];
if (!root) throw new Error("usage: eval:pair-turns DIR [--impostor-pairs N] [--cache FILE]");
const FLOORS = [0.5, 0.8, 1.2, 2.4];

/** A pair's upright similarity, and for a pair not accepted upright each turn's full and light similarity. */
interface PairRow {
  upright: number;
  full: number[];
  light: number[];
}

const subjects = readLabelledDataset(root);
const images = subjects.flatMap((s) => s.images);
const pairs = chooseImagePairs(subjects.flatMap((s, k) => s.images.map(() => k)), Number(values["impostor-pairs"]));
const templates = (await pairTemplates(root, images, values.cache)).map((t) => (t ? deserializeTemplate(t) : null));
await shutdownEngine();
const views = new Map<number, NoseTemplate[] | null>();
const light = new Map<NoseTemplate, NoseTemplate>();
const lightOf = (t: NoseTemplate) => light.get(t) ?? light.set(t, strongestKeypoints(t, RERANK_KEYPOINTS)).get(t)!;
const rows: PairRow[] = [];
for (const { a, b } of pairs) {
  const [ta, tb] = [templates[a], templates[b]];
  const upright = ta && tb ? compareTemplates(ta, tb).similarity : 0;
  if (!ta || !tb || !triesQuarterTurns(upright, pairScore)) {
    rows.push({ upright, full: [], light: [] });
    continue;
  }
  if (!views.has(a)) views.set(a, await quarterTurnViews(fs.readFileSync(path.join(root, images[a])), ta));
  const turned = views.get(a) ?? [];
  rows.push({
    upright,
    full: turned.map((view) => compareTemplates(view, tb).similarity),
    light: turned.map((view) => compareTemplates(lightOf(view), lightOf(tb), WHOLE_FRAME_HYPOTHESES).similarity),
  });
}

function report(rule: string, score: (row: PairRow) => number): void {
  const scores = rows.map(score);
  const genuine = scores.filter((_, k) => pairs[k].genuine);
  const impostor = scores.filter((_, k) => !pairs[k].genuine);
  const fnmr = (fmr: number) => `${(fnmrAtFmr(genuine, impostor, fmr).fnmr * 100).toFixed(2)} %`;
  const accepted = genuine.filter((raw) => pairScore(raw) >= DECISION_THRESHOLD).length / genuine.length;
  console.log(`${rule}: AUC ${areaUnderRoc(genuine, impostor).toFixed(4)}, FNMR at FMR 1 % ${fnmr(0.01)}, at 0.1 % ${fnmr(0.001)}, accepted at 40 ${(accepted * 100).toFixed(2)} %`);
}

const best = (row: PairRow, turns: number[]) => Math.max(row.upright, ...turns.map((t) => row.full[t]));
const turnsOf = (row: PairRow) => row.full.map((_, t) => t);
console.log(`data set: ${path.resolve(root)}; ${pairs.filter((p) => p.genuine).length} genuine, ${pairs.filter((p) => !p.genuine).length} impostor image pairs`);
report("upright only", (row) => row.upright);
report("best of four (compareImagePair)", (row) => best(row, turnsOf(row)));
for (const floor of FLOORS) {
  const through = rows.filter((row, k) => !pairs[k].genuine && row.light.some((l) => l >= floor)).length / pairs.filter((p) => !p.genuine).length;
  report(`turns whose light comparison reaches ${floor} (${(through * 100).toFixed(1)} % of impostor pairs matched turned)`, (row) =>
    best(row, turnsOf(row).filter((t) => row.light[t] >= floor)),
  );
}
report("the turn the light comparison ranks first", (row) =>
  row.light.length && Math.max(...row.light) > 0 ? best(row, [row.light.indexOf(Math.max(...row.light))]) : row.upright,
);
