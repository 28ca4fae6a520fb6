/**
 * npm run eval:distinctiveness -- DIR [DIR...] [--subjects 45] [--first-subject 0] [--probes 4]
 * How weighing inliers by their keypoints' genericness (distinctiveness.ts) separates genuine from impostor
 * image pairs when one calibration must serve several settings (a hard set and a normal one). For each DIR, the
 * first capture of `--subjects` subjects is compared with the next `--probes` captures of every one of them
 * (own subject: genuine; others: impostor). Each pair's inliers are found once (the hypothesis is chosen by
 * inlier count, which no weight changes); every weighting is then applied to the same inliers. Prints, per
 * weighting and DIR: the impostors' 99th percentile, the genuine pairs' acceptance (TMR) at the DIR's own
 * impostors' FMR 0.1 %, and at the impostors of all DIRs pooled. Pair level, not session level. Also prints each
 * DIR's keypoint genericness percentiles (10th, 50th, 90th).
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { GENERICNESS_MAX } from "@/lib/biometrics/distinctiveness";
import { quantile } from "../bench/stats";
import { readLabelledDataset } from "../evaluation/dataset";
import { extractNoseImage } from "@/lib/biometrics/extract";
import { compareTemplatesInDetail, inlierGenericness, inlierWeight } from "@/lib/biometrics/pair-matcher";
import type { NoseTemplate } from "@/lib/biometrics/template";

const { positionals, values } = parseScriptArgs({
  name: "eval:distinctiveness",
  description: "How inlier weightings by genericness separate genuine from impostor image pairs on each set and on their pooled impostors.",
  args: "DIR [DIR...]",
  options: {
    subjects: { type: "string", default: "45" },
    "first-subject": { type: "string", default: "0" },
    probes: { type: "string", default: "4" },
  },
});
if (positionals.length === 0) throw new Error("usage: eval:distinctiveness DIR [DIR...] [--subjects 45] [--first-subject 0] [--probes 4]");
const subjectCount = Number(values.subjects);
const firstSubject = Number(values["first-subject"]);
const probes = Number(values.probes);

/** One inlier: its descriptor cosine and its two keypoints' genericness in [0, 1]. */
type Inlier = [cosine: number, genericA: number, genericB: number];
interface PairInliers {
  set: string;
  genuine: boolean;
  inliers: Inlier[];
}

const weightings: { name: string; weight: (inlier: Inlier) => number }[] = (() => {
  // The engine's weight at the reference genericness (factor 1) is format 8's ((c − 0.2)/0.8)².
  const base = (c: number) => inlierWeight(c);
  const list: { name: string; weight: (inlier: Inlier) => number }[] = [{ name: "((c − 0.2)/0.8)² (format 8)", weight: ([c]) => base(c) }];
  for (const p of [1, 2, 4, 6]) list.push({ name: `× (1 − max g)^${p}`, weight: ([c, a, b]) => base(c) * (1 - Math.max(a, b)) ** p });
  list.push({ name: "× (1 − mean g)^4", weight: ([c, a, b]) => base(c) * (1 - (a + b) / 2) ** 4 });
  list.push({ name: "× ((1 − gA)(1 − gB))²", weight: ([c, a, b]) => base(c) * ((1 - a) * (1 - b)) ** 2 });
  list.push({
    name: "the engine's inlierWeight",
    weight: ([c, a, b]) => inlierWeight(c, inlierGenericness(a * GENERICNESS_MAX, b * GENERICNESS_MAX)),
  });
  return list;
})();

async function templateOf(root: string, image: string): Promise<NoseTemplate | null> {
  const extraction = await extractNoseImage(new Uint8Array(fs.readFileSync(path.join(root, image))));
  return extraction.ok ? extraction.template : null;
}

const pairs: PairInliers[] = [];
const sets = positionals.map((root) => path.basename(path.resolve(root)));
for (const [s, root] of positionals.entries()) {
  const subjects = readLabelledDataset(root).slice(firstSubject, firstSubject + subjectCount);
  const started = performance.now();
  const templates = await Promise.all(
    subjects.map(async (subject) => Promise.all(subject.images.slice(0, 1 + probes).map((image) => templateOf(root, image)))),
  );
  for (const [i, own] of templates.entries()) {
    const a = own[0];
    if (!a) continue;
    for (const [j, other] of templates.entries()) {
      for (const b of other.slice(1)) {
        if (!b) continue;
        const { inliers } = compareTemplatesInDetail(a, b);
        const found: Inlier[] = (inliers?.a ?? []).map((ka, n) => [
          inliers!.cosine[n],
          a.genericness[ka] / GENERICNESS_MAX,
          b.genericness[inliers!.b[n]] / GENERICNESS_MAX,
        ]);
        pairs.push({ set: sets[s], genuine: i === j, inliers: found });
      }
    }
  }
  const ofSet = pairs.filter((p) => p.set === sets[s]);
  console.log(`${sets[s]}: ${ofSet.filter((p) => p.genuine).length} genuine and ${ofSet.filter((p) => !p.genuine).length} impostor pairs, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const genericness = templates.flat().flatMap((t) => (t ? Array.from(t.genericness, (byte) => byte / GENERICNESS_MAX) : []));
  console.log(`  keypoint genericness g (${genericness.length} keypoints): ${[0.1, 0.5, 0.9].map((q) => `p${q * 100} ${quantile(genericness, q).toFixed(3)}`).join(", ")}`);
}

/** The score that no more than a fraction `fmr` of `impostors` reaches or passes: the impostors' quantile, strictly above. */
function thresholdAt(impostors: number[], fmr: number): number {
  const sorted = [...impostors].sort((x, y) => y - x);
  return sorted[Math.floor(fmr * sorted.length)] ?? 0;
}
const acceptance = (genuine: number[], threshold: number) => genuine.filter((g) => g > threshold).length / genuine.length;
const percent = (x: number) => `${(100 * x).toFixed(1)} %`;

console.log(`\n| inlier weight | ${sets.map((s) => `${s}: impostor q99 / TMR at own FMR 0.1 % / TMR at pooled FMR 0.1 %`).join(" | ")} |`);
console.log(`|---|${sets.map(() => "---|").join("")}`);
for (const { name, weight } of weightings) {
  const similarity = pairs.map((p) => ({ ...p, score: p.inliers.reduce((sum, inlier) => sum + weight(inlier), 0) }));
  const pooled = thresholdAt(similarity.filter((p) => !p.genuine).map((p) => p.score), 0.001);
  const cells = sets.map((set) => {
    const ofSet = similarity.filter((p) => p.set === set);
    const impostors = ofSet.filter((p) => !p.genuine).map((p) => p.score);
    const genuine = ofSet.filter((p) => p.genuine).map((p) => p.score);
    const q99 = thresholdAt(impostors, 0.01);
    return `${q99.toFixed(2)} / ${percent(acceptance(genuine, thresholdAt(impostors, 0.001)))} / ${percent(acceptance(genuine, pooled))}`;
  });
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}
