/**
 * npm run eval:regions -- DIR --cache FILE
 * Where on the nose the matcher's evidence lies, by the generator's ground truth: for the image pairs of a synthetic
 * set (genuine: each subject's first capture against its others; impostor: the subjects' first captures against each
 * other), the winning hypothesis' inliers counted by the region their keypoints show: the pad's interior, its edge
 * (the outline's band), the fur on the rest of the dome, or the backdrop (a real-setting ray that misses the dome).
 * An inlier counts in the outermost region of its two keypoints. Reads the templates of `npm run eval:pairs -- DIR
 * --cache FILE`. Prints the shares over all pairs and over the 30 highest-scoring ones.
 */
import { parseScriptArgs } from "@/scripts/script-cli";
import { compareTemplatesInDetail } from "@/lib/biometrics/pair-matcher";
import type { NoseTemplate } from "@/lib/biometrics/template";
import { keypointRegion, readCachedSet, REGIONS } from "./ground-truth";

const { positionals, values } = parseScriptArgs({
  name: "eval:regions",
  description: "Where the inliers of a synthetic set's genuine and impostor image pairs lie on the nose (pad, edge, fur, backdrop).",
  args: "DIR",
  options: { cache: { type: "string", description: "the templates eval:pairs --cache wrote for DIR" } },
});
const root = positionals[0];
if (!root || !values.cache) throw new Error("usage: eval:regions DIR --cache FILE");
const { images, templates, subjectOf: subjectOfImage, truthOf } = readCachedSet(root, values.cache);

function regionOf(image: number, template: NoseTemplate, keypoint: number): number {
  const { plan, subject } = truthOf(image);
  return keypointRegion(plan, subject, template, keypoint);
}

interface Counted {
  similarity: number;
  byRegion: number[];
}

function count(a: number, b: number): Counted | null {
  const [ta, tb] = [templates[a], templates[b]];
  if (!ta || !tb) return null;
  const { best, inliers } = compareTemplatesInDetail(ta, tb, true);
  const byRegion = REGIONS.map(() => 0);
  for (let n = 0; n < (inliers?.a.length ?? 0); n++) byRegion[Math.max(regionOf(a, ta, inliers!.a[n]), regionOf(b, tb, inliers!.b[n]))]++;
  return { similarity: best.similarity, byRegion };
}

const firsts = subjectOfImage.flatMap((s, i) => (i === 0 || subjectOfImage[i - 1] !== s ? [i] : []));
const genuine: Counted[] = [];
const impostor: Counted[] = [];
const keep = (rows: Counted[], counted: Counted | null) => counted && rows.push(counted);
for (const [k, first] of firsts.entries()) {
  for (let i = first + 1; i < images.length && subjectOfImage[i] === subjectOfImage[first]; i++) keep(genuine, count(first, i));
  for (const other of firsts.slice(k + 1)) keep(impostor, count(first, other));
}

function shares(rows: Counted[]): string {
  const sums = REGIONS.map((_, r) => rows.reduce((sum, row) => sum + row.byRegion[r], 0));
  const total = sums.reduce((a, b) => a + b, 0) || 1;
  return REGIONS.map((name, r) => `${name} ${((100 * sums[r]) / total).toFixed(0)} %`).join(", ");
}
for (const [name, rows] of [["genuine", genuine], ["impostor", impostor]] as const) {
  const top = [...rows].sort((p, q) => q.similarity - p.similarity).slice(0, 30);
  console.log(`${name} pairs ${rows.length}: inliers on ${shares(rows)}; the 30 highest: ${shares(top)}`);
}
