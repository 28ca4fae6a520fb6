import fs from "node:fs";
import { Gallery } from "@/lib/biometrics/gallery";
import { rankShortlist, rerankCandidates } from "@/lib/biometrics/operations";
import { deserializeTemplate, lightTemplateOf, searchKeyOfTemplate } from "@/lib/biometrics/template";
import { deserializeSearchKey } from "@/lib/biometrics/search-key";
import { DESCRIPTOR_SETS, MATCHED_SETS, RERANK_CANDIDATES, SHORTLIST_SIZE } from "@/lib/biometrics/parameters";
import { Rng } from "@/lib/synth/prng";

const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
function read(file: string): (Uint8Array | null)[] {
  const bytes = fs.readFileSync(file);
  const out: (Uint8Array | null)[] = [];
  for (let at = 0; at < bytes.byteLength; ) {
    const length = bytes.readUInt32LE(at);
    at += 4;
    if (length === 0xffffffff) out.push(null);
    else { out.push(new Uint8Array(bytes.subarray(at, at + length))); at += length; }
  }
  return out;
}
const dir = "/tmp/rhinarium-bench-cache";
const pool = read(`${dir}/distractors-normal-300-v9.bin`).filter((t): t is Uint8Array => !!t);
const real = read(`${dir}/probes-real-70-s5151-v9.bin`);
const N = Number(process.argv[2] ?? 50000);
const g = new Gallery();
const rng = new Rng(777);
const keys = pool.map((t) => deserializeSearchKey(searchKeyOfTemplate(t)));
const pets = new Map<string, Uint8Array[]>();
let t = cpuNow();
for (let i = 0; i < N; i++) {
  const mix = Array.from({ length: 5 }, () => Math.floor(rng.next() * pool.length));
  pets.set(`d${i}`, mix.map((m) => pool[m]));
  g.upsert(`d${i}`, mix.map((m) => keys[m]));
}
console.log("build", N, (cpuNow() - t).toFixed(0), "ms");
const stranger = (s: number) => [5, 6, 7].map((c) => real[s * 8 + c]).filter((x): x is Uint8Array => !!x);
for (let s = 50; s < 56; s++) {
  const probeBytes = stranger(s);
  const probe = probeBytes.map(deserializeTemplate);
  t = cpuNow();
  const fast = g.shortlist(probe, SHORTLIST_SIZE, MATCHED_SETS);
  const tFast = cpuNow() - t;
  t = cpuNow();
  const head = rankShortlist(probeBytes, fast.petIds.map((id) => ({ petId: id, templates: pets.get(id)! })));
  const tRank = cpuNow() - t;
  t = cpuNow();
  const deep = g.shortlist(probe, RERANK_CANDIDATES, DESCRIPTOR_SETS);
  const tDeep = cpuNow() - t;
  const rest = deep.petIds.filter((id) => !fast.petIds.includes(id));
  const lightPets = rest.map((id) => ({ petId: id, templates: pets.get(id)!.map(lightTemplateOf) }));
  t = cpuNow();
  const light = rerankCandidates(probeBytes, lightPets);
  const tLight = cpuNow() - t;
  console.log(JSON.stringify({ s, fast: tFast.toFixed(0), rank16: tRank.toFixed(0), deep: tDeep.toFixed(0), light: tLight.toFixed(0), n: rest.length, bestRaw: head.bestRaw.toFixed(2), maxLight: Math.max(...light.map((l) => l.raw)).toFixed(2) }));
}
