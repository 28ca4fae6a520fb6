/**
 * npm run bench:search -- DIR [--sizes 1000,10000,100000] [--enrolled 180] [--cache FILE] [--evaluation FILE]
 * 1:N first stage at scale: real hard probes (captures 5–7 of DIR's first `--enrolled` subjects) against
 * galleries of their real enrolments (captures 0–4) topped up with distractor pets
 * (lab/evaluation/distractors.ts) to each size. Prints, per size: index bytes per pet, build
 * time, first-stage latency p50/p95 on one thread and its mean CPU time (robust to other processes sharing
 * the machine, which stretch wall time), and how often the true pet is first, in the top 10,
 * within the SHORTLIST_SIZE that the full matcher then compares, and in the top 40. A size no larger
 * than `--enrolled` means the real pets alone. With `--evaluation` (the evaluation.json that `npm run eval -- DIR`
 * wrote), it also counts, per size, the probes whose pet missed the shortlist although the full matcher scored
 * their genuine session at or above the decision threshold: the first stage's misses, not the matcher's. Its
 * genuine scores follow DIR's subjects in order, so it must come from a run with no failure to enrol.
 * The first-stage figures are the deep pass's (all descriptor frames). With `--cascade`, it also runs the fast pass
 * (matched frames, SHORTLIST_SIZE; how often the true pet is in its first SHORTLIST_SIZE and deeper, FAST_DEPTHS) and the light comparison (`lightRawScores`) of the real pets among the deep
 * pass's RERANK_CANDIDATES that the fast pass did not list, and counts how often the true pet is compared in full
 * (in the fast pass, or promoted by `promoteByLightScore`; as if the fast pass's full matching had accepted nobody,
 * which the service requires before the deep pass: `rerankNeeded`), and the light stage's mean time a probe on one thread. Distractor pets have no templates, so
 * they take no part in it: the figure is exact only for sizes up to `--enrolled`. Prints figures only.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { cpuMsSince } from "../bench/stats";
import { readLabelledDataset } from "../evaluation/dataset";
import { readSubjectCache, subjectTemplates, usableTemplates as usable, writeSubjectCache } from "../evaluation/subject-cache";
import { distractorKeys } from "../evaluation/distractors";
import { Gallery } from "@/lib/biometrics/gallery";
import { analyseImage, shutdownEngine } from "@/lib/biometrics/index";
import { promoteByLightScore } from "@/lib/biometrics/candidates";
import { lightRawScores } from "@/lib/biometrics/operations";
import { DESCRIPTOR_SETS, MATCHED_SETS, RERANK_CANDIDATES, SHORTLIST_SIZE } from "@/lib/biometrics/parameters";
import { DECISION_THRESHOLD } from "@/lib/biometrics/scoring";

const { positionals, values } = parseScriptArgs({
  name: "bench:search",
  description: "The 1:N first stage at scale: a set's real probes against galleries of their real enrolments topped up with distractor pets.",
  args: "DIR",
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    enrolled: { type: "string", default: "180" },
    // Keeps the extracted templates between runs (extraction is most of a small run's time).
    cache: { type: "string" },
    evaluation: { type: "string" },
    cascade: { type: "boolean", default: false },
  },
});
const root = positionals[0];
if (!root) throw new Error("usage: npm run bench:search -- DIR [--sizes 1000,10000,100000] [--enrolled 180] [--cache FILE] [--evaluation FILE]");
const sizes = values.sizes.split(",").map(Number);
const subjects = readLabelledDataset(root).slice(0, Number(values.enrolled));

// Extract every capture once, across the engine's worker pool.
async function extractAll(): Promise<(string | null)[][]> {
  const started = performance.now();
  const extracted = await Promise.all(
    subjects.map(async (subject) =>
      Promise.all(
        subject.images.map(async (image) => {
          // Every capture is some search's probe here, so each is extracted as 1:N probes are, with the outer frames.
          const analysis = await analyseImage(fs.readFileSync(path.join(root, image)), { outerFrames: true });
          return analysis.ok && analysis.template ? Buffer.from(analysis.template).toString("base64") : null;
        }),
      ),
    ),
  );
  await shutdownEngine();
  console.log(`extracted ${subjects.length} subjects' captures in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return extracted;
}
const cached = values.cache && fs.existsSync(values.cache) ? readSubjectCache(values.cache) : null;
const stored = cached ?? (await extractAll());
if (values.cache && !cached) writeSubjectCache(values.cache, stored);
const templates = subjectTemplates(stored);
const enrolments = templates.map((list) => usable(list.slice(0, 5)));
const probes = templates.map((list) => usable(list.slice(5)));
const pool = enrolments.flat().map((t) => t.searchKey);

/** The protocol's genuine session scores by subject (evaluation.json), when asked for. */
function genuineScores(file: string): number[] {
  const evaluation = JSON.parse(fs.readFileSync(file, "utf8")) as { genuine: number[]; figures: { failureToEnrol: number } };
  if (evaluation.figures.failureToEnrol > 0) throw new Error("bench:search: the evaluation has failures to enrol, so its genuine scores no longer line up with subjects");
  return evaluation.genuine;
}
const genuine = values.evaluation ? genuineScores(values.evaluation) : null;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
const RANKS = [1, 10, SHORTLIST_SIZE, 40, RERANK_CANDIDATES];
/** With `--cascade`: how deep in the fast pass's first stage the true pet is, at SHORTLIST_SIZE and deeper. */
const FAST_DEPTHS = [SHORTLIST_SIZE, 24, 32, 48, 64];
console.log(`size | bytes/pet | build s | first stage p50 / p95 ms | CPU ms mean | true pet in top ${RANKS.join(" / ")}`);
for (const size of sizes) {
  const gallery = new Gallery();
  const built = performance.now();
  enrolments.forEach((list, s) => gallery.upsert(`real-${s}`, list.map((t) => t.searchKey)));
  let d = 0;
  for (const keys of distractorKeys(pool, Math.max(0, size - enrolments.length), 5, 7_000 + size)) gallery.upsert(`distractor-${d++}`, keys);
  const buildSeconds = (performance.now() - built) / 1000;
  const latencies: number[] = [];
  const found = RANKS.map(() => 0);
  let queries = 0;
  let cpuMs = 0;
  const missed: string[] = [];
  let missedAccepted = 0;
  let compared = 0;
  const fastDepthFound = FAST_DEPTHS.map(() => 0);
  let comparedAccepted = 0;
  let lightMs = 0;
  probes.forEach((probe, s) => {
    if (probe.length < 2) return;
    const t0 = performance.now();
    const cpu = process.cpuUsage();
    const { petIds } = gallery.shortlist(probe, Math.max(...RANKS), DESCRIPTOR_SETS);
    cpuMs += cpuMsSince(cpu);
    latencies.push(performance.now() - t0);
    queries++;
    const rank = petIds.indexOf(`real-${s}`);
    RANKS.forEach((limit, i) => rank >= 0 && rank < limit && found[i]++);
    if (values.cascade) {
      const t1 = performance.now();
      const fastRanked = gallery.shortlist(probe, Math.max(...FAST_DEPTHS), MATCHED_SETS).petIds;
      const fast = fastRanked.slice(0, SHORTLIST_SIZE);
      const fastRank = fastRanked.indexOf(`real-${s}`);
      FAST_DEPTHS.forEach((depth, i) => fastRank >= 0 && fastRank < depth && fastDepthFound[i]++);
      const rest = petIds.slice(0, RERANK_CANDIDATES).filter((id) => !fast.includes(id));
      // Distractor pets have search keys only: the light comparison sees the real pets among the candidates.
      const light = lightRawScores(probe, rest.filter((id) => id.startsWith("real-")).map((id) => ({ petId: id, templates: enrolments[Number(id.slice(5))] })));
      lightMs += performance.now() - t1;
      if (fast.includes(`real-${s}`) || promoteByLightScore(light).includes(`real-${s}`)) {
        compared++;
        if (genuine && s < genuine.length && genuine[s] >= DECISION_THRESHOLD) comparedAccepted++;
      }
    }
    if (genuine && s < genuine.length && !(rank >= 0 && rank < SHORTLIST_SIZE)) {
      missed.push(`${s}: rank ${rank < 0 ? `> ${Math.max(...RANKS)}` : rank + 1}, session score ${genuine[s]}`);
      if (genuine[s] >= DECISION_THRESHOLD) missedAccepted++;
    }
  });
  latencies.sort((a, b) => a - b);
  const pct = (n: number) => `${((100 * n) / queries).toFixed(1)} %`;
  console.log(
    `${gallery.size} | ${Math.round(gallery.bytes / gallery.size)} | ${buildSeconds.toFixed(1)} | ` +
      `${quantile(latencies, 0.5).toFixed(0)} / ${quantile(latencies, 0.95).toFixed(0)} | ${(cpuMs / queries).toFixed(0)} | ${found.map(pct).join(" / ")}`,
  );
  if (values.cascade) {
    const accepted = genuine ? `; and its genuine session scored ${DECISION_THRESHOLD} or more: ${pct(comparedAccepted)}` : "";
    console.log(
      `  cascade: true pet in the fast pass's first ${FAST_DEPTHS.join(" / ")} (matched frames; it compares ${SHORTLIST_SIZE}): ${fastDepthFound.map(pct).join(" / ")}; compared in full after the deep pass's light comparison: ` +
        `${pct(compared)}${accepted} (fast pass and light stage ${(lightMs / queries).toFixed(0)} ms a probe)`,
    );
  }
  if (genuine) {
    console.log(
      `  pets missing from the ${SHORTLIST_SIZE} among subjects with a genuine session score: ${missed.length}, ` +
        `of them scored ${DECISION_THRESHOLD} or more by the full matcher: ${missedAccepted} (${missed.join("; ")})`,
    );
  }
  gallery.dispose();
}
