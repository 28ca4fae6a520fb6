import fs from "node:fs";
import { Gallery, searchKeyFrom } from "@/lib/biometrics/gallery";
import { searchKeyOfTemplate } from "@/lib/biometrics/template";
import { Rng } from "@/lib/synth/prng";
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
function read(file: string): Uint8Array[] {
  const bytes = fs.readFileSync(file);
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.byteLength; ) {
    const length = bytes.readUInt32LE(at); at += 4;
    if (length !== 0xffffffff) { out.push(new Uint8Array(bytes.subarray(at, at + length))); at += length; }
  }
  return out;
}
const pool = read("/tmp/rhinarium-bench-cache/distractors-normal-300-v9.bin").map(searchKeyOfTemplate);
const N = Number(process.argv[2] ?? 5000);
const rng = new Rng(777);
const pets = Array.from({ length: N }, (_, i) => ({ petId: `d${i}`, templates: Array.from({ length: 5 }, () => pool[Math.floor(rng.next() * pool.length)]) }));
const g = new Gallery();
let t = cpuNow();
const keys = pets.map((p) => p.templates.map(searchKeyFrom));
const tDeser = cpuNow() - t;
t = cpuNow();
if (process.argv[3] === "many") for (let i = 0; i < N; i += 500) g.upsertMany(pets.slice(i, i + 500).map((p, j) => ({ petId: p.petId, keys: keys[i + j] })));
else for (let i = 0; i < N; i++) g.upsert(pets[i].petId, keys[i]);
const tUpsert = cpuNow() - t;
console.log(JSON.stringify({ N, deserialize: tDeser.toFixed(0), upsert: tUpsert.toFixed(0), perPetUs: ((tDeser + tUpsert) * 1000 / N).toFixed(0), postingsPerImage: (keys.flat().reduce((s, k) => s + k.words.length, 0) / (N * 5)).toFixed(0), keyBytes: pool[0].byteLength }));
