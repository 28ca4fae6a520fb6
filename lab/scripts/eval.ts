/**
 * npm run eval -- DIR [--out FOLDER] [--impostor-subjects N] [--unenrolled-fraction F]
 *   The session protocol on a labelled set DIR/<subject>/<capture>.jpg: enrol 5 captures, probe with the
 *   next 3; all impostor comparisons among the first N enrolled subjects (default all); a share of
 *   subjects (default 10 %) never enrolled. Prints the figures; writes DET and histogram SVGs + JSON.
 *   --publish also writes the dashboard's chart data to lib/engine-figures.json.
 * npm run --silent eval -- pairs PAIRS.csv --root DIR [--upright]
 *   One `a,b,score` line per pair on stdout (single-image 1:1 score 0–100; a pair not accepted upright is also tried at
 *   a's quarter turns, unless --upright; an image the quality gate refuses is still compared, one that cannot be decoded
 *   or has no keypoint scores 0). --upright scores every pair upright only, on the same table: the measurement of
 *   decision 0032's trade on real pairs, beside the default.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { scoreImagePair, shutdownEngine, DECISION_THRESHOLD } from "@/lib/biometrics";
import { areaUnderRoc, computeDet, equalErrorRate, fnmrAtFmr } from "../evaluation/metrics";
import { formatScoreLines, parsePairsCsv } from "../evaluation/pairs-csv";
import { pairTemplates } from "../evaluation/image-pairs";
import { buildDashboardFigures } from "../evaluation/dashboard-figures";
import { PUBLISHED_FIGURES_PATH } from "@/lib/engine-figures";
import { detCurveSvg, scoreHistogramSvg } from "../evaluation/plots";
import { canProbe, usableImages } from "../evaluation/protocol";
import { runProtocol, type ProtocolRun } from "../evaluation/run-protocol";
import type { IdentificationOutcome } from "@/lib/biometrics/operations";
import { sessionScore } from "@/lib/biometrics/scoring";


const percent = (value: number) => `${(value * 100).toFixed(3)} %`;

async function scorePairs(csvPath: string, root: string, upright: boolean): Promise<void> {
  const pairs = parsePairsCsv(fs.readFileSync(csvPath, "utf8"));
  const unique = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  // A photo the quality gate refuses is still compared: a single pair has no retake (decision 0019).
  const extracted = await pairTemplates(root, unique);
  const templates = new Map(unique.map((name, k) => [name, extracted[k]]));
  const scores = await Promise.all(
    pairs.map(async ({ a, b }) => {
      const ta = templates.get(a);
      const tb = templates.get(b);
      // A's JPEG lets a pair the upright comparison does not accept try a's quarter turns (a nose at any roll).
      return { a, b, score: ta && tb ? await scoreImagePair(ta, tb, upright ? undefined : fs.readFileSync(path.join(root, a))) : 0 };
    }),
  );
  process.stdout.write(formatScoreLines(scores));
}

/** Why an enrolled probe's pet was not ranked first: the matcher scored its session below the threshold, the cascade never compared it in full, or another pet outscored it. */
type Rank1Miss = { subject: string; reason: "below threshold" | "not compared" | "outranked"; score: number };

async function identifyAll(
  run: ProtocolRun,
  genuineScores: number[],
): Promise<{ rank1: number; enrolledProbes: number; strangersRejected: number; strangerProbes: number; misses: Rank1Miss[]; strangersMatched: string[] }> {
  const { plan, usable, failedToEnrol, workers } = run;
  const gallery = plan.enrolled
    .filter((s) => !failedToEnrol.has(s.id))
    .map((s) => ({ petId: s.id, images: usableImages(s.enrol, usable) }));
  const probes = [
    ...gallery.map((g) => ({ id: g.petId, truth: g.petId as string | null, images: plan.enrolled.find((s) => s.id === g.petId)!.probe })),
    ...plan.unenrolled.map((u) => ({ id: u.id, truth: null, images: u.probe })),
  ];
  const batch = 4;
  const requests = [];
  for (let i = 0; i < probes.length; i += batch) {
    requests.push({
      kind: "identify" as const,
      probes: probes.slice(i, i + batch).map((p) => (canProbe(p.images, usable) ? usableImages(p.images, usable) : [])),
      gallery,
    });
  }
  process.stderr.write(`identifying ${probes.length} probes among ${gallery.length} pets\n`);
  const outcomes = (await workers.map<IdentificationOutcome[]>(requests)).flat();
  let rank1 = 0;
  let strangersRejected = 0;
  const misses: Rank1Miss[] = [];
  const strangersMatched: string[] = [];
  probes.forEach((probe, i) => {
    const top = outcomes[i].candidates[0]?.petId;
    if (probe.truth !== null && top === probe.truth) rank1++;
    else if (probe.truth !== null) {
      // Enrolled probes come first, in the gallery's order, which is the order of the genuine sessions.
      const score = genuineScores[i];
      const found = outcomes[i].candidates.some((c) => c.petId === probe.truth);
      misses.push({ subject: probe.truth, score, reason: score < DECISION_THRESHOLD ? "below threshold" : found ? "outranked" : "not compared" });
    }
    if (probe.truth === null && outcomes[i].candidates.length === 0) strangersRejected++;
    else if (probe.truth === null) strangersMatched.push(`${probe.id} → ${outcomes[i].candidates[0].petId} ${outcomes[i].candidates[0].score}`);
  });
  const enrolledProbes = probes.filter((p) => p.truth !== null).length;
  return { rank1, enrolledProbes, strangersRejected, strangerProbes: probes.length - enrolledProbes, misses, strangersMatched };
}

async function evaluate(root: string, outDir: string, impostorSubjects: number, unenrolledFraction: number, publish: boolean): Promise<void> {
  const run = await runProtocol(root, { impostorSubjects, unenrolledFraction });
  const genuine = run.genuineSessions.map(sessionScore);
  const impostor = run.impostorSessions.map(sessionScore);
  const identification = await identifyAll(run, genuine);
  await run.workers.close();
  const eer = equalErrorRate(genuine, impostor);
  const atFmr = [0.01, 0.001, 0.0001].map((target) => ({ target, ...fnmrAtFmr(genuine, impostor, target) }));
  const enrolledCount = run.plan.enrolled.length;
  const figures = {
    dataset: path.resolve(root),
    enrolledSubjects: enrolledCount - run.failedToEnrol.size,
    genuineComparisons: genuine.length,
    impostorComparisons: impostor.length,
    eer: eer.eer,
    fnmrAtFmr: atFmr.map(({ target, fnmr, threshold }) => ({ fmr: target, fnmr, threshold })),
    auc: areaUnderRoc(genuine, impostor),
    pairAuc: areaUnderRoc(run.genuinePairs, run.impostorPairs),
    rank1: identification.rank1 / Math.max(1, identification.enrolledProbes),
    unenrolledMatchingNobody: identification.strangersRejected / Math.max(1, identification.strangerProbes),
    failureToEnrol: run.failedToEnrol.size / Math.max(1, enrolledCount),
    unusableImages: run.usable.filter((u) => !u).length / Math.max(1, run.usable.length),
    msPerImageExtraction: run.extractionMsPerImage,
    msPerSessionComparison: run.msPerSessionComparison,
    msPerPairComparison: run.msPerPairComparison,
    decisionThreshold: DECISION_THRESHOLD,
  };
  console.log(`data set: ${figures.dataset}`);
  console.log(`genuine comparisons: ${genuine.length}, impostor comparisons: ${impostor.length} (3 probe vs 5 enrolled images)`);
  console.log(`EER: ${percent(figures.eer)}`);
  for (const { target, fnmr, threshold } of atFmr) console.log(`FNMR at FMR ${target * 100} %: ${percent(fnmr)} (score threshold ${threshold})`);
  console.log(`AUC: ${figures.auc.toFixed(6)} (session), ${figures.pairAuc.toFixed(6)} (image pair)`);
  {
    const upright = run.uprightGenuineSessions.map(sessionScore);
    const uprightImpostor = run.uprightImpostorSessions.map(sessionScore);
    const at = fnmrAtFmr(upright, uprightImpostor, 0.001);
    console.log(
      `  upright only (no quarter turns): EER ${percent(equalErrorRate(upright, uprightImpostor).eer)}, FNMR at FMR 0.1 % ${percent(at.fnmr)}, AUC ${areaUnderRoc(upright, uprightImpostor).toFixed(6)}; largest impostor ${Math.max(0, ...uprightImpostor)} (with the turns ${Math.max(0, ...impostor)})`,
    );
  }
  console.log(`rank-1 identification rate: ${percent(figures.rank1)} (${identification.enrolledProbes} probes, ${figures.enrolledSubjects} enrolled)`);
  for (const reason of ["below threshold", "not compared", "outranked"] as const) {
    const of = identification.misses.filter((miss) => miss.reason === reason);
    console.log(`  rank-1 misses, ${reason}: ${of.length}${of.length ? ` (${of.map((miss) => `${miss.subject} ${miss.score}`).join(", ")})` : ""}`);
  }
  console.log(`unenrolled probes matching nobody: ${percent(figures.unenrolledMatchingNobody)} (${identification.strangerProbes} probes)`);
  if (identification.strangersMatched.length) console.log(`  unenrolled probes matched (best pet, score): ${identification.strangersMatched.join(", ")}`);
  console.log(`failure-to-enrol rate: ${percent(figures.failureToEnrol)} (unusable images: ${percent(figures.unusableImages)})`);
  console.log(`ms per image extraction: ${figures.msPerImageExtraction.toFixed(1)}`);
  console.log(`ms per comparison: ${figures.msPerSessionComparison.toFixed(2)} (3 vs 5 session), ${figures.msPerPairComparison.toFixed(3)} (image pair)`);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(
    path.join(outDir, "det.svg"),
    detCurveSvg([{ name: "Rhinarium (3 vs 5)", points: computeDet(genuine, impostor), threshold: DECISION_THRESHOLD }], {
      title: "DET: session verification", threshold: DECISION_THRESHOLD,
    }),
  );
  fs.writeFileSync(
    path.join(outDir, "scores.svg"),
    scoreHistogramSvg({ genuine, impostor, threshold: DECISION_THRESHOLD, title: "Session scores", logCount: true, min: 0, max: 100 }),
  );
  fs.writeFileSync(path.join(outDir, "evaluation.json"), JSON.stringify({ figures, genuine, impostorSample: impostor.filter((s) => s > 0) }, null, 1));
  const dashboard = buildDashboardFigures(genuine, impostor, {
    dataset: path.basename(figures.dataset),
    threshold: DECISION_THRESHOLD,
    eer: figures.eer,
    fnmrAtFmr: figures.fnmrAtFmr,
  });
  fs.writeFileSync(path.join(outDir, "dashboard-figures.json"), JSON.stringify(dashboard));
  console.log(`wrote ${path.join(outDir, "det.svg")}, scores.svg, evaluation.json and dashboard-figures.json`);
  if (publish) {
    // The manager's charts in the dashboard read this committed copy.
    fs.writeFileSync(PUBLISHED_FIGURES_PATH, JSON.stringify(dashboard));
    console.log(`published the dashboard figures to ${PUBLISHED_FIGURES_PATH}`);
  }
}

async function main(): Promise<void> {
  const { positionals, values } = parseScriptArgs({
    name: "eval",
    description: "The session protocol on a labelled set DIR/<subject>/<capture>.jpg (EER, FNMR at FMR, rank-1, ...); or `pairs PAIRS.csv --root DIR`: a,b,score per image pair.",
    args: "DIR | pairs PAIRS.csv",
    options: {
      root: { type: "string" },
      out: { type: "string" },
      "impostor-subjects": { type: "string" },
      "unenrolled-fraction": { type: "string", default: "0.1" },
      publish: { type: "boolean", default: false },
      upright: { type: "boolean", default: false, description: "eval pairs: score every pair upright only (no quarter turns)" },
    },
  });
  if (positionals[0] === "pairs") {
    if (!positionals[1] || !values.root) throw new Error("usage: eval pairs PAIRS.csv --root DIR [--upright]");
    await scorePairs(positionals[1], values.root, Boolean(values.upright));
  } else {
    if (!positionals[0]) throw new Error("usage: eval DIR [--out FOLDER] [--impostor-subjects N] [--unenrolled-fraction F]");
    const root = positionals[0];
    const out = values.out ?? path.join("eval-out", path.basename(path.resolve(root)));
    await evaluate(root, out, Number(values["impostor-subjects"] ?? Infinity), Number(values["unenrolled-fraction"]), values.publish);
  }
  await shutdownEngine();
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
