import fs from "node:fs";
import { extractNoseImage } from "@/lib/biometrics/extract";
import { compareTemplates } from "@/lib/biometrics/pair-matcher";
import { readLabelledDataset } from "@/lib/biometrics/evaluation/dataset";
import { areaUnderRoc } from "@/lib/biometrics/evaluation/metrics";
import { sessionRawScore } from "@/lib/biometrics/session-matcher";
const dir = process.argv[2]; const nsub = Number(process.argv[3] ?? 20);
const subs = readLabelledDataset(dir).slice(0, nsub);
const T: any[][] = [];
for (const s of subs) { const row: any[] = []; for (const im of s.images) { const r = await extractNoseImage(fs.readFileSync(`${dir}/${im}`)); row.push(r.ok ? r.template : null); } T.push(row); }
const cmp = (a: any, b: any) => (a && b ? compareTemplates(a, b).inliers : 0);
const gen: number[] = [], imp: number[] = [], sg: number[] = [], si: number[] = [];
for (let x = 0; x < T.length; x++) for (let y = 0; y < T.length; y++) {
  const m = T[x].slice(5, 8).map((p) => T[y].slice(0, 5).map((e) => cmp(p, e)));
  (x === y ? sg : si).push(sessionRawScore(m));
  for (const row of m) (x === y ? gen : imp).push(...row);
}
const pct = (a: number[], p: number) => [...a].sort((u, v) => u - v)[Math.floor(p * (a.length - 1))];
const fnmrAt = (g: number[], i: number[]) => { const t = Math.max(...i); return g.filter((v) => v <= t).length / g.length; };
console.log(`pairAUC ${areaUnderRoc(gen, imp).toFixed(4)} sessAUC ${areaUnderRoc(sg, si).toFixed(4)} sess gen p10=${pct(sg, .1)} p50=${pct(sg, .5)} imp max=${Math.max(...si)} FNMR@0FMR ${(fnmrAt(sg, si) * 100).toFixed(1)}% | pair imp p99=${pct(imp, .99)} max=${Math.max(...imp)}`);
