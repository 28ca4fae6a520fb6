/**
 * npm run eval:cascade -- CACHE [--enrolled 800]
 * The 1:N cascade (`runCascade`, the service's) on a `npm run bench:search -- DIR --cache CACHE` file: the first
 * `--enrolled` subjects are enrolled (captures 0–4), every subject is probed with its other captures, so the rest
 * are animals nobody enrolled. Prints rank-1, strangers matching nobody, how many pets each search compared lightly
 * and in full and its CPU time, enrolled and unknown apart; and for each enrolled probe whose pet the full matcher
 * accepts but the cascade did not answer first, where the pet stood at each stage: the fast first stage's rank, the
 * light comparison's rank among the fast pass's pets, the deep first stage's rank and the light rank among all pets
 * compared lightly. Prints figures only.
 */
import { parseScriptArgs } from "@/scripts/script-cli";
import { cpuMsSince } from "../bench/stats";
import { readSubjectCache, subjectTemplates, usableTemplates as usable } from "../evaluation/subject-cache";
import { runCascade } from "@/lib/biometrics/cascade";
import type { LightScore } from "@/lib/biometrics/candidates";
import { Gallery } from "@/lib/biometrics/gallery";
import { lightRawScores, rankCandidates } from "@/lib/biometrics/operations";
import { DECISION_THRESHOLD, sessionScore } from "@/lib/biometrics/scoring";
import { compareSessions } from "@/lib/biometrics/session-matcher";

const { positionals, values } = parseScriptArgs({
  name: "eval:cascade",
  description: "The 1:N cascade on a bench:search --cache file: rank-1, strangers, comparisons, and where missed pets stood.",
  args: "CACHE",
  options: { enrolled: { type: "string", default: "800" } },
});
const cache = positionals[0];
if (!cache) throw new Error("usage: npm run eval:cascade -- CACHE [--enrolled 800]");

const subjects = subjectTemplates(readSubjectCache(cache));
const enrolledCount = Math.min(Number(values.enrolled), subjects.length);
const pets = subjects.slice(0, enrolledCount).map((list, s) => ({ petId: `pet-${s}`, templates: usable(list.slice(0, 5)) })).filter((pet) => pet.templates.length >= 3);
const byId = new Map(pets.map((pet) => [pet.petId, pet.templates]));
const withTemplates = (petIds: readonly string[]) => petIds.map((petId) => ({ petId, templates: byId.get(petId) ?? [] }));
const gallery = new Gallery();
for (const pet of pets) gallery.upsert(pet.petId, pet.templates.map((t) => t.searchKey));

interface Tally {
  probes: number;
  right: number;
  light: number;
  full: number;
  cpuMs: number;
}
const emptyTally = (): Tally => ({ probes: 0, right: 0, light: 0, full: 0, cpuMs: 0 });
const tally = { enrolled: emptyTally(), unknown: emptyTally() };
const misses: string[] = [];
const rankOf = (list: readonly string[], petId: string) => {
  const i = list.indexOf(petId);
  return i < 0 ? "–" : String(i + 1);
};
const lightRankOf = (light: readonly LightScore[], petId: string) => {
  const own = light.find((score) => score.petId === petId);
  return own ? `${light.filter((score) => score.raw > own.raw).length + 1} of ${light.length} (${own.raw.toFixed(2)})` : "–";
};

for (const [s, list] of subjects.entries()) {
  const probe = usable(list.slice(5));
  if (probe.length < 2) continue;
  const truth = byId.has(`pet-${s}`) ? `pet-${s}` : null;
  const shortlists: string[][] = [];
  const lights: LightScore[][] = [];
  const cpu = process.cpuUsage();
  let full = 0;
  const outcome = await runCascade({
    shortlist: async (limit, sets) => {
      const result = gallery.shortlist(probe, limit, sets, `probe-${s}`);
      shortlists.push(result.petIds);
      return result;
    },
    rank: async (petIds) => {
      full += petIds.length;
      return rankCandidates(probe, withTemplates(petIds));
    },
    compareLightly: async (petIds) => {
      const light = lightRawScores(probe, withTemplates(petIds));
      lights.push(light);
      return light;
    },
  });
  const t = truth ? tally.enrolled : tally.unknown;
  t.probes++;
  t.cpuMs += cpuMsSince(cpu);
  t.full += full;
  t.light += lights.reduce((sum, light) => sum + light.length, 0);
  const top = outcome.candidates[0]?.petId ?? null;
  if (top === truth) t.right++;
  else if (truth) {
    const score = sessionScore(compareSessions(probe, byId.get(truth)!).raw);
    if (score < DECISION_THRESHOLD) continue;
    const found = outcome.candidates.some((c) => c.petId === truth);
    misses.push(
      `| ${s} | ${score} | ${found ? `outranked by ${top} ${outcome.candidates[0].score}` : "not compared in full"} | ${rankOf(shortlists[0], truth)} | ${lightRankOf(lights[0] ?? [], truth)} | ` +
        `${shortlists[1] ? rankOf(shortlists[1], truth) : "no deep pass"} | ${shortlists[1] ? lightRankOf(lights.flat(), truth) : "–"} |`,
    );
  }
}
gallery.dispose();

const line = (name: string, t: Tally, what: string) =>
  console.log(
    `${name}: ${t.probes} probes, ${what} ${t.right} (${((100 * t.right) / Math.max(1, t.probes)).toFixed(1)} %); a search compared ${(t.light / t.probes).toFixed(1)} pets lightly, ` +
      `${(t.full / t.probes).toFixed(2)} in full, ${(t.cpuMs / t.probes).toFixed(0)} ms of CPU`,
  );
console.log(`${pets.length} pets enrolled`);
line("enrolled animals", tally.enrolled, "rank-1");
line("unknown animals", tally.unknown, "matching nobody");
console.log(`pets the full matcher accepts (at ${DECISION_THRESHOLD}) that the cascade did not answer first: ${misses.length}`);
if (misses.length) {
  console.log("| subject | its session score | why | fast first-stage rank | fast light rank | deep first-stage rank | light rank, all lightly compared |");
  console.log("|---|---|---|---|---|---|---|");
  for (const miss of misses) console.log(miss);
}
