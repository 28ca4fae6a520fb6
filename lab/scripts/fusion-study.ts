/**
 * The session-fusion study (docs/engine.md, "Session fusion and weighted inliers"): every image pair of the
 * evaluation protocol compared once, with its figures and inliers, stored; fusion rules then evaluated offline.
 *
 * npm run study:fusion -- dump DIR OUT.json [--impostor-subjects N] [--unenrolled-fraction F] [--strangers]
 *   Same plan as `npm run eval` (enrol captures 1–5, probe 6–8, impostors among the first N enrolled). With
 *   --strangers, each never-enrolled subject's probe also against every enrolment. ~4 ms a pair on 2 workers.
 * npm run study:fusion -- rules OUT.json [--threshold-from CALIBRATION.json,...]
 *   EER and FNMR at FMR 1 / 0.1 / 0.01 % of each rule on the stored pairs (seconds). With --threshold-from, each
 *   rule's threshold is where every given dump's impostors reach FMR 0.1 % and 0.01 % (the larger value, as the
 *   committed calibration combines its sets), and it prints how many of OUT.json's genuine sessions reach it.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { analyseImage, shutdownEngine } from "@/lib/biometrics";
import { readLabelledDataset } from "../evaluation/dataset";
import type { PairDetailRow } from "../evaluation/eval-worker";
import { EvalWorkers } from "../evaluation/eval-workers";
import { areaUnderRoc, equalErrorRate, fnmrAtFmr } from "../evaluation/metrics";
import { canEnrol, canProbe, planProtocol, usableImages } from "../evaluation/protocol";
import { sessionRawScore } from "@/lib/biometrics/scoring";

interface StoredSession {
  /** genuine; probe subject; enrolled subject; stranger (probe subject never enrolled) */
  g: boolean;
  ps: string;
  es: string;
  stranger: boolean;
  probe: number[];
  enrol: number[];
  /** rows of `PairDetailRow`, probe image after probe image */
  pairs: PairDetailRow[];
}

const log = (message: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);

async function dump(root: string, out: string, impostorSubjects: number, unenrolledFraction: number, strangers: boolean): Promise<void> {
  const plan = planProtocol(readLabelledDataset(root), { impostorSubjects, unenrolledFraction });
  const templates: (Uint8Array | null)[] = new Array(plan.images.length);
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < plan.images.length) {
      const i = next++;
      const analysis = await analyseImage(fs.readFileSync(path.join(root, plan.images[i])));
      templates[i] = analysis.ok ? analysis.template : null;
    }
  }));
  await shutdownEngine();
  const usable = templates.map((t) => t !== null);
  const gallery = plan.enrolled.filter((s) => canEnrol(s, usable));
  const impostorSet = gallery.slice(0, plan.impostorSubjects);
  const sessions: (Omit<StoredSession, "pairs"> & { offset: number })[] = [];
  const flat: number[] = [];
  const add = (g: boolean, ps: string, probe: number[], es: string, enrol: number[], stranger = false) => {
    const probeImages = canProbe(probe, usable) ? usableImages(probe, usable) : [];
    const enrolImages = usableImages(enrol, usable);
    sessions.push({ g, ps, es, stranger, probe: probeImages, enrol: enrolImages, offset: flat.length / 2 });
    for (const p of probeImages) for (const e of enrolImages) flat.push(p, e);
  };
  for (const s of gallery) add(true, s.id, s.probe, s.id, s.enrol);
  for (const p of impostorSet) for (const e of impostorSet) if (e !== p) add(false, p.id, p.probe, e.id, e.enrol);
  if (strangers) for (const u of plan.unenrolled) for (const e of gallery) add(false, u.id, u.probe, e.id, e.enrol, true);
  const workers = new EvalWorkers();
  await workers.broadcast({ kind: "load", templates });
  const pairs = Int32Array.from(flat);
  const requests = [];
  for (let start = 0; start < pairs.length; start += 2000) requests.push({ kind: "pair-details" as const, pairs: pairs.slice(start, start + 2000) });
  log(`${sessions.length} sessions, ${pairs.length / 2} image pairs on ${workers.size} workers`);
  const started = performance.now();
  const rows = (await workers.map<PairDetailRow[]>(requests, (done) => done % 10 === 0 && log(`  ${done * 1000}/${pairs.length / 2} pairs`))).flat();
  log(`compared in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  await workers.close();
  const stored: StoredSession[] = sessions.map(({ offset, ...s }) => ({ ...s, pairs: rows.slice(offset, offset + s.probe.length * s.enrol.length) }));
  fs.writeFileSync(out, JSON.stringify({ root: path.resolve(root), images: plan.images, sessions: stored }));
  log(`wrote ${out}`);
}


/** `weighted` is the engine's pair similarity; `hypotheses` each rotation hypothesis' similarity. */
type Pair = { inliers: number; tentative: number; cosine: number[]; probeKeypoints: number[]; weighted: number; hypotheses: number[] };
type Rule = (matrix: Pair[][]) => number;

const sortedDown = (values: number[]) => [...values].sort((x, y) => y - x);
const meanOfTop = (values: number[], k: number) => { const top = sortedDown(values).slice(0, k); return top.length ? top.reduce((s, v) => s + v, 0) / top.length : 0; };
const sumOfTop = (values: number[], k: number) => sortedDown(values).slice(0, k).reduce((s, v) => s + v, 0);
/** Each probe image reduces its row with `perProbe`, the session keeps the mean of the best `probes` of those. */
const rowRule = (figure: (p: Pair) => number, perProbe: (row: number[]) => number, probes: number): Rule =>
  (m) => meanOfTop(m.map((row) => perProbe(row.map(figure))), probes);
const best = (row: number[]) => Math.max(0, ...row);

/** log10 P(X ≥ k) for X ~ Binomial(n, p). */
function log10BinomialTail(n: number, k: number, p: number): number {
  if (k <= 0) return 0;
  if (k > n) return -Infinity;
  const logFactorial = (x: number) => { let s = 0; for (let i = 2; i <= x; i++) s += Math.log(i); return s; };
  const terms: number[] = [];
  for (let i = k; i <= n && i <= k + 60; i++) terms.push(logFactorial(n) - logFactorial(i) - logFactorial(n - i) + i * Math.log(p) + (n - i) * Math.log1p(-p));
  const top = Math.max(...terms);
  return (top + Math.log(terms.reduce((s, t) => s + Math.exp(t - top), 0))) / Math.LN10;
}
/** A-contrario significance: −log10 of the expected number of chance transforms (3 hypotheses × T anchors) with this support. */
const aContrario = (chance: number) => (p: Pair) => (p.inliers < 3 ? 0 : Math.max(0, -(log10BinomialTail(p.tentative - 1, p.inliers - 1, chance) + Math.log10(3 * p.tentative))));
/** Per probe image: distinct probe keypoints that are inliers against at least `times` enrolled images. */
const confirmedPoints = (times: number): Rule => (m) => meanOfTop(m.map((row) => {
  const hits = new Map<number, number>();
  for (const p of row) for (const k of p.probeKeypoints) hits.set(k, (hits.get(k) ?? 0) + 1);
  return [...hits.values()].filter((n) => n >= times).length;
}), 2);

const RULES: [string, Rule][] = [
  ["inliers: best per probe, mean of best 2 (format 3 before weighting)", rowRule((p) => p.inliers, best, 2)],
  ["inliers: best per probe, mean of all 3", rowRule((p) => p.inliers, best, 3)],
  ["inliers: best probe image only", rowRule((p) => p.inliers, best, 1)],
  ["inliers: sum of best 2 per probe, mean of best 2", rowRule((p) => p.inliers, (r) => sumOfTop(r, 2), 2)],
  ["inliers: sum of all 15 pairs", (m) => m.flat().reduce((s, p) => s + p.inliers, 0)],
  ["inliers: sum of the best 4 pairs", (m) => sumOfTop(m.flat().map((p) => p.inliers), 4)],
  ["inliers above 8, summed over all pairs", (m) => m.flat().reduce((s, p) => s + Math.max(0, p.inliers - 8), 0)],
  ["inliers − 0.15 × tentative: best, mean of 2", rowRule((p) => p.inliers - 0.15 * p.tentative, best, 2)],
  ["a-contrario (p 0.005): best, mean of 2", rowRule(aContrario(0.005), best, 2)],
  ["a-contrario (p 0.02): best, mean of 2", rowRule(aContrario(0.02), best, 2)],
  ["probe points confirmed by ≥ 2 enrolled images", confirmedPoints(2)],
  ["inliers with cosine ≥ 0.88: best, mean of 2", rowRule((p) => p.cosine.filter((c) => c >= 0.88).length, best, 2)],
  ["Σ (cos − 0.8)/0.2: best, mean of 2", rowRule((p) => p.cosine.reduce((s, c) => s + Math.max(0, (c - 0.8) / 0.2), 0), best, 2)],
  ["weighted inliers: best, mean of all 3", rowRule((p) => p.weighted, best, 3)],
  ["weighted inliers: best per probe, mean of best 2 (the engine's rule)", (m) => sessionRawScore(m.map((row) => row.map((p) => p.weighted)))],
  ["weighted inliers of the hypothesis with the most weight, not the most inliers: best, mean of 2", (m) => sessionRawScore(m.map((row) => row.map((p) => Math.max(0, ...p.hypotheses))))],
  ["weighted inliers: best probe image only", rowRule((p) => p.weighted, best, 1)],
  ["weighted inliers: sum of best 2 per probe, mean of best 2", rowRule((p) => p.weighted, (r) => sumOfTop(r, 2), 2)],
  ["weighted inliers: mean of best 2 per probe, mean of best 2", rowRule((p) => p.weighted, (r) => meanOfTop(r, 2), 2)],
  ["weighted inliers: the engine's rule or 0.75 × the best probe image, the larger", (m) => Math.max(sessionRawScore(m.map((row) => row.map((p) => p.weighted))), 0.75 * rowRule((p) => p.weighted, best, 1)(m))],
  ["weighted inliers: sum of the best 4 pairs", (m) => sumOfTop(m.flat().map((p) => p.weighted), 4)],
  ["weighted inliers: sum of the best 6 pairs", (m) => sumOfTop(m.flat().map((p) => p.weighted), 6)],
  ["weighted inliers: sum of all 15 pairs", (m) => m.flat().reduce((s, p) => s + p.weighted, 0)],
];

/** The hypothesis compareTemplatesInDetail kept: the first with the most inliers, then the most tentative matches. */
const keptHypothesis = (r: PairDetailRow) => r[9].findIndex((_, h) => r[4][2 * h] === r[0] && r[4][2 * h + 1] === r[1]);

/** A dump's sessions as matrices of pairs: genuine, impostor, and stranger (never-enrolled probe) sessions. */
function readSessions(file: string): { genuine: Pair[][][]; impostor: Pair[][][]; strangers: Pair[][][] } {
  const stored = JSON.parse(fs.readFileSync(file, "utf8")) as { sessions: StoredSession[] };
  const asPair = (r: PairDetailRow): Pair => ({
    inliers: r[0], tentative: r[1], probeKeypoints: r[5], cosine: r[7], hypotheses: r[9], weighted: r[9][keptHypothesis(r)] ?? 0,
  });
  const matrix = (s: StoredSession) => s.probe.map((_, p) => s.pairs.slice(p * s.enrol.length, (p + 1) * s.enrol.length).map(asPair));
  return {
    genuine: stored.sessions.filter((s) => s.g).map(matrix),
    impostor: stored.sessions.filter((s) => !s.g && !s.stranger).map(matrix),
    strangers: stored.sessions.filter((s) => s.stranger).map(matrix),
  };
}

const ruleValue = (rule: Rule) => (m: Pair[][]) => (m.length ? rule(m) : 0);

/** Each rule's genuine sessions of `file` at or above the value where every calibration dump's impostors reach each FMR. */
function judgeAgainstCalibration(file: string, calibrationFiles: string[]): void {
  const judged = readSessions(file).genuine;
  const calibration = calibrationFiles.map((f) => readSessions(f).impostor);
  const targets = [0.001, 0.0001];
  console.log(`${file}: ${judged.length} genuine sessions; thresholds from the impostors of ${calibrationFiles.join(", ")} (${calibration.map((c) => c.length).join(", ")} sessions)`);
  console.log(`| rule | genuine accepted at FMR ${targets.map((t) => `${t * 100} %`).join(" / ")} |`);
  console.log("|---|---|");
  for (const [name, rule] of RULES) {
    const value = ruleValue(rule);
    const impostors = calibration.map((sessions) => sessions.map(value).sort((a, b) => b - a));
    // The smallest value that at most a share `target` of each set's impostors reach: above its k-th largest.
    const threshold = (target: number) => Math.max(...impostors.map((sorted) => (sorted[Math.floor(target * sorted.length)] ?? 0) + 1e-9));
    const genuine = judged.map(value);
    console.log(`| ${name} | ${targets.map((t) => `${genuine.filter((v) => v >= threshold(t)).length} of ${genuine.length}`).join(" / ")} |`);
  }
}

function rules(file: string): void {
  const { genuine, impostor, strangers } = readSessions(file);
  const pc = (v: number) => `${(v * 100).toFixed(2)} %`;
  console.log(`${file}: ${genuine.length} genuine, ${impostor.length} impostor sessions${strangers.length ? `, ${strangers.length} stranger sessions` : ""}`);
  console.log("| rule | EER | FNMR at FMR 1 % / 0.1 % / 0.01 % | AUC | genuine above every impostor |" + (strangers.length ? " stranger sessions ≥ largest impostor |" : ""));
  console.log("|---|---|---|---|---|" + (strangers.length ? "---|" : ""));
  for (const [name, rule] of RULES) {
    const raw = ruleValue(rule);
    const g = genuine.map(raw);
    const i = impostor.map(raw);
    const largest = Math.max(...i);
    const fnmr = [0.01, 0.001, 0.0001].map((t) => pc(fnmrAtFmr(g, i, t).fnmr)).join(" / ");
    const strangerCell = strangers.length ? ` ${strangers.map(raw).filter((v) => v >= largest).length} |` : "";
    console.log(`| ${name} | ${pc(equalErrorRate(g, i).eer)} | ${fnmr} | ${areaUnderRoc(g, i).toFixed(5)} | ${g.filter((v) => v > largest).length} of ${g.length} |${strangerCell}`);
  }
}

const { positionals, values } = parseScriptArgs({
  name: "study:fusion",
  description: "Every image pair of the evaluation protocol stored with its inliers (dump), then session fusion rules scored offline (rules).",
  args: "dump DIR OUT.json | rules OUT.json",
  options: {
    "impostor-subjects": { type: "string" },
    "unenrolled-fraction": { type: "string", default: "0.1" },
    strangers: { type: "boolean", default: false },
    "threshold-from": { type: "string" },
  },
});
if (positionals[0] === "dump" && positionals[1] && positionals[2]) {
  await dump(positionals[1], positionals[2], Number(values["impostor-subjects"] ?? Infinity), Number(values["unenrolled-fraction"]), values.strangers);
} else if (positionals[0] === "rules" && positionals[1] && values["threshold-from"]) {
  judgeAgainstCalibration(positionals[1], values["threshold-from"].split(","));
} else if (positionals[0] === "rules" && positionals[1]) {
  rules(positionals[1]);
} else {
  throw new Error("usage: study:fusion -- dump DIR OUT.json [--impostor-subjects N] [--strangers] | rules OUT.json [--threshold-from A.json,B.json]");
}
