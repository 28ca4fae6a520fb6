import fs from "node:fs";
import { rankShortlist, rerankCandidates } from "@/lib/biometrics/operations";
import { lightTemplateOf } from "@/lib/biometrics/template";
import { Rng } from "@/lib/synth/prng";
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
function read(file: string): (Uint8Array | null)[] {
  const bytes = fs.readFileSync(file);
  const out: (Uint8Array | null)[] = [];
  for (let at = 0; at < bytes.byteLength; ) {
    const length = bytes.readUInt32LE(at); at += 4;
    if (length === 0xffffffff) out.push(null); else { out.push(new Uint8Array(bytes.subarray(at, at + length))); at += length; }
  }
  return out;
}
const pool = read("/tmp/rhinarium-bench-cache/distractors-normal-300-v9.bin").filter((t): t is Uint8Array => !!t);
const real = read("/tmp/rhinarium-bench-cache/probes-real-70-s5151-v9.bin");
const rng = new Rng(1);
const pets = Array.from({ length: 368 }, (_, i) => ({ petId: `d${i}`, templates: Array.from({ length: 5 }, () => pool[Math.floor(rng.next() * pool.length)]) }));
const light = pets.map((p) => ({ petId: p.petId, templates: p.templates.map(lightTemplateOf) }));
for (let s = 50; s < 54; s++) {
  const probe = [5, 6, 7].map((c) => real[s * 8 + c]).filter((x): x is Uint8Array => !!x);
  let t = cpuNow();
  rerankCandidates(probe, light);
  const tl = cpuNow() - t;
  t = cpuNow();
  rankShortlist(probe, pets.slice(0, 16));
  console.log(JSON.stringify({ light368: tl.toFixed(0), full16: (cpuNow() - t).toFixed(0) }));
}
