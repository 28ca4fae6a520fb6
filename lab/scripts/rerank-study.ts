/**
 * npm run eval:rerank -- CACHE [--pets 1000] [--depth 400] [--keypoints 120,60,45,30] [--hypotheses 5]
 * The cascade's deep pass, studied (docs/engine.md, "A deeper, lighter re-rank"). CACHE is the template cache that
 * `npm run bench:search -- DIR --enrolled N --cache CACHE` writes (one JSON line of base64 templates per subject:
 * captures 0–4 enrolled, the rest the probe). For each probe whose true pet misses the fast pass's SHORTLIST_SIZE,
 * prints the true pet's rank in the deep first stage (all frames, `--depth` pets) and, for each keypoint count, its
 * light-comparison rank among the candidates the first stage ranks above it and among all `--depth`, and the light
 * comparison's time a pet on this thread. The light comparison tries the first `--hypotheses` of ROTATION_HYPOTHESES
 * (by default the cascade's, WHOLE_FRAME_HYPOTHESES). Prints figures only.
 */
import { parseScriptArgs } from "@/scripts/script-cli";
import { readSubjectCache, subjectTemplates, usableTemplates as usable } from "../evaluation/subject-cache";
import { Gallery } from "@/lib/biometrics/gallery";
import { DESCRIPTOR_SETS, MATCHED_SETS, SHORTLIST_SIZE } from "@/lib/biometrics/parameters";
import { WHOLE_FRAME_HYPOTHESES } from "@/lib/biometrics/pair-matcher";
import { compareSessions } from "@/lib/biometrics/session-matcher";
import { strongestKeypoints } from "@/lib/biometrics/template";

const { positionals, values } = parseScriptArgs({
  name: "eval:rerank",
  description: "The 1:N deep pass studied on a bench:search --cache file.",
  args: "CACHE",
  options: {
    pets: { type: "string", default: "1000" },
    depth: { type: "string", default: "400" },
    keypoints: { type: "string", default: "120,60,45,30" },
    hypotheses: { type: "string", default: String(WHOLE_FRAME_HYPOTHESES) },
  },
});
const cache = positionals[0];
if (!cache) throw new Error("usage: npm run eval:rerank -- CACHE [--pets 1000] [--depth 400] [--keypoints 120,60,45,30] [--hypotheses 5]");
const pets = Number(values.pets);
const depth = Number(values.depth);
const keypointCounts = values.keypoints.split(",").map(Number);
const hypotheses = Number(values.hypotheses);

const subjects = subjectTemplates(readSubjectCache(cache).slice(0, pets));
const enrolments = subjects.map((list) => usable(list.slice(0, 5)));
const probes = subjects.map((list) => usable(list.slice(5)));
const gallery = new Gallery();
enrolments.forEach((list, s) => gallery.upsert(`pet-${s}`, list.map((t) => t.searchKey)));
const lightEnrolments = keypointCounts.map((k) => enrolments.map((list) => list.map((t) => strongestKeypoints(t, k))));

console.log(`${subjects.length} pets; probes whose true pet misses the fast pass's ${SHORTLIST_SIZE}:`);
console.log(`| probe | deep first-stage rank | ${keypointCounts.map((k) => `${k} keypoints: light rank among those above / among ${depth}, ms a pet`).join(" | ")} |`);
console.log(`|---|---|${keypointCounts.map(() => "---|").join("")}`);
probes.forEach((probe, s) => {
  if (probe.length < 2) return;
  const fast = gallery.shortlist(probe, SHORTLIST_SIZE, MATCHED_SETS).petIds;
  if (fast.includes(`pet-${s}`)) return;
  const deep = gallery.shortlist(probe, depth, DESCRIPTOR_SETS).petIds.filter((id) => !fast.includes(id));
  const rank = deep.indexOf(`pet-${s}`);
  const cells = keypointCounts.map((k, i) => {
    if (rank < 0) return "–";
    const lightProbe = probe.map((t) => strongestKeypoints(t, k));
    const started = performance.now();
    const raw = deep.map((id) => compareSessions(lightProbe, lightEnrolments[i][Number(id.slice(4))], hypotheses).raw);
    const msPerPet = (performance.now() - started) / deep.length;
    const own = raw[rank];
    const above = (values: number[]) => values.filter((v) => v > own).length + 1;
    return `${above(raw.slice(0, rank + 1))} of ${rank + 1} / ${above(raw)} of ${raw.length}, ${msPerPet.toFixed(1)}`;
  });
  console.log(`| ${s} | ${rank < 0 ? `> ${depth}` : rank + 1} | ${cells.join(" | ")} |`);
});
gallery.dispose();
