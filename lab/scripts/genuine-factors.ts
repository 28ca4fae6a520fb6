/**
 * npm run eval:factors -- DIR --cache FILE [--threshold 40]
 * What makes a synthetic real-setting set's genuine image pairs fail, by the generator's ground truth: every pair of
 * two captures of one subject from different bursts (frames of one burst nearly always match), scored by the
 * engine as `npm run eval:pairs -- DIR --cache FILE` scores it (the templates it wrote), and the share accepted at
 * the threshold in each quartile (or, for a factor of few values, at each value) of one capture-pair factor at a time: the turn between the two viewing directions,
 * the difference of roll in the image plane, the scale ratio, the light's change of direction, the larger defocus and
 * motion blur (in 320 px work pixels), the smaller crop, the glare blobs and the stronger specular gloss. Then the
 * roll difference in 4° steps, which shows how the descriptor frames' spacing (DESCRIPTOR_ANGLES_DEG) tells.
 */
import { parseScriptArgs } from "@/scripts/script-cli";
import { compareTemplates } from "@/lib/biometrics/pair-matcher";
import { pairScore } from "@/lib/biometrics/scoring";
import { WORK_SIZE } from "@/lib/biometrics/parameters";
import { readCachedSet, type CachedSet } from "./ground-truth";

const { positionals, values } = parseScriptArgs({
  name: "eval:factors",
  description: "Genuine cross-burst image pairs of a synthetic real-setting set: the share accepted in each quartile of each ground-truth factor.",
  args: "DIR",
  options: {
    cache: { type: "string", description: "the templates eval:pairs --cache wrote for DIR" },
    threshold: { type: "string", default: "40" },
  },
});
const root = positionals[0];
if (!root || !values.cache) throw new Error("usage: eval:factors DIR --cache FILE [--threshold 40]");
const threshold = Number(values.threshold);
const { manifest, images, templates, subjectOf: subjectOfImage, truthOf } = readCachedSet(root, values.cache);
if (manifest.difficulty !== "real") throw new Error("eval:factors: the factors are those of the real setting's camera and light");

type Plan = ReturnType<CachedSet["truthOf"]>["plan"];
const DEG = 180 / Math.PI;
/** The smallest angle between two directions given in degrees. */
const angleApart = (a: number, b: number) => Math.abs((((a - b) % 360) + 540) % 360 - 180);
const workPixels = (plan: Plan, pixels: number) => (pixels * WORK_SIZE) / plan.width;

const FACTORS: Record<string, (a: Plan, b: Plan) => number> = {
  "view turn (°)": (a, b) => {
    const [p, q] = [a.camera!.forward, b.camera!.forward];
    return Math.acos(Math.min(1, p[0] * q[0] + p[1] * q[1] + p[2] * q[2])) * DEG;
  },
  "roll difference (°)": (a, b) => angleApart(a.rotation * DEG, b.rotation * DEG),
  "scale ratio (|log|)": (a, b) => Math.abs(Math.log(a.pixelsPerUnit / a.width / (b.pixelsPerUnit / b.width))),
  "light turn (°)": (a, b) => angleApart(a.lightAzimuth * DEG, b.lightAzimuth * DEG),
  "defocus σ (px)": (a, b) => Math.max(workPixels(a, a.defocusSigma), workPixels(b, b.defocusSigma)),
  "motion blur (px)": (a, b) => Math.max(workPixels(a, a.motionLength), workPixels(b, b.motionLength)),
  "smaller crop (px)": (a, b) => Math.min(a.width, b.width),
  "glare blobs": (a, b) => a.glare.length + b.glare.length,
  "specular gloss": (a, b) => Math.max(a.specular, b.specular),
};

interface Row {
  factors: number[];
  accepted: boolean;
}
const rows: Row[] = [];
for (let i = 0; i < images.length; i++) {
  for (let j = i + 1; j < images.length && subjectOfImage[j] === subjectOfImage[i]; j++) {
    const [a, b] = [truthOf(i), truthOf(j)];
    if (a.burst === b.burst) continue;
    const [ta, tb] = [templates[i], templates[j]];
    const score = ta && tb ? pairScore(compareTemplates(ta, tb).similarity) : 0;
    rows.push({ factors: Object.values(FACTORS).map((f) => f(a.plan, b.plan)), accepted: score >= threshold });
  }
}

const share = (of: Row[]) => `${((100 * of.filter((r) => r.accepted).length) / Math.max(1, of.length)).toFixed(0)} %`;
console.log(`${rows.length} genuine pairs of different bursts, accepted at ${threshold}: ${share(rows)}`);
for (const [f, name] of Object.keys(FACTORS).entries()) {
  const sorted = [...rows].sort((p, q) => p.factors[f] - q.factors[f]);
  const distinct = [...new Set(sorted.map((r) => r.factors[f]))];
  // A factor of few values (glare blobs) is grouped by value: quartiles would split ties.
  const groups =
    distinct.length <= 6
      ? distinct.map((value) => sorted.filter((r) => r.factors[f] === value))
      : [0, 1, 2, 3].map((k) => sorted.slice(Math.floor((k * sorted.length) / 4), Math.floor(((k + 1) * sorted.length) / 4)));
  const range = (g: Row[]) => (g[0].factors[f] === g[g.length - 1].factors[f] ? `${g[0].factors[f]}` : `${g[0].factors[f].toFixed(2)}–${g[g.length - 1].factors[f].toFixed(2)}`);
  const cells = groups.map((g) => `${range(g)}: ${share(g)} of ${g.length}`);
  console.log(`${name.padEnd(22)} ${cells.join(" | ")}`);
}
const roll = Object.keys(FACTORS).indexOf("roll difference (°)");
for (let low = 0; low < 60; low += 4) {
  const band = rows.filter((r) => r.factors[roll] >= low && r.factors[roll] < low + 4);
  if (band.length >= 20) console.log(`roll difference ${low}–${low + 4}°: ${band.length} pairs, accepted ${share(band)}`);
}
