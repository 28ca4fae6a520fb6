/**
 * npm run bench:engine [-- --subjects 50 --impostor-pairs 2000] [-- --only extraction|full-matching|kernels]
 * Single-thread latency of the engine and a side-by-side run against the peer baseline (OpenCV SIFT +
 * ratio test + RANSAC, Debian's python3-opencv) on the same image pairs of a synthetic hard set.
 * Prints figures only; nothing is asserted (speed and accuracy live in benchmarks, not in tests). Beside
 * each wall time, our CPU time (process.cpuUsage), which other processes on the machine do not stretch.
 * `--only extraction` times extraction alone (no hard set, no peer): quick enough to alternate with
 * another checkout's run when comparing speed on a loaded machine. `--only full-matching` times the 1:N full matching
 * of 1 to 5 pets spread over the engine's workers (`rankOverPool`), as a cascade step matches them. `--only kernels`
 * times a session comparison, in full and lightly, with each set of engine kernels this machine runs (native or not).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import sharp from "sharp";
import { cpuMsSince } from "../bench/stats";
import { areaUnderRoc, equalErrorRate } from "../evaluation/metrics";
import { runSiftPeer } from "../evaluation/sift-peer";
import { extractNoseImage, type ExtractionOptions } from "@/lib/biometrics/extract";
import { analyseImage, engineThreads, rankOverPool, shutdownEngine } from "@/lib/biometrics/index";
import { verifyPet } from "@/lib/biometrics/operations";
import { compareTemplates, WHOLE_FRAME_HYPOTHESES } from "@/lib/biometrics/pair-matcher";
import { RERANK_KEYPOINTS } from "@/lib/biometrics/parameters";
import { compareSessions } from "@/lib/biometrics/session-matcher";
import { ENGINE_KERNEL, ENGINE_KERNELS, useEngineKernel } from "@/lib/biometrics/simd/native-kernels";
import { serializeTemplate, strongestKeypoints, type NoseTemplate } from "@/lib/biometrics/template";
import { captureFileName, generateDataset, subjectDirName } from "../synth/dataset";

const { values } = parseScriptArgs({
  name: "bench:engine",
  description: "Single-thread latency of the engine, then the same image pairs of a synthetic hard set scored by Rhinarium and by OpenCV SIFT + RANSAC (Debian's python3-opencv).",
  options: {
    subjects: { type: "string", default: "50" },
    "impostor-pairs": { type: "string", default: "2000" },
    only: { type: "string" },
  },
});
const ONLY = ["extraction", "full-matching", "kernels"];
if (values.only !== undefined && !ONLY.includes(values.only)) throw new Error(`--only accepts ${ONLY.join(", ")}, not "${values.only}"`);
const subjects = Number(values.subjects);
const impostorPairs = Number(values["impostor-pairs"]);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-bench-"));

function quantiles(samples: number[]): { median: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], p95: sorted[Math.floor(sorted.length * 0.95)] };
}
const ms = (value: number) => `${value.toFixed(1)} ms`;


async function timeExtraction(options: ExtractionOptions): Promise<{ median: number; p95: number; cpuPerImage: number; images: number }> {
  const root = path.join(work, "normal");
  await generateDataset({ out: root, subjects: 6, captures: 4, seed: 404, difficulty: "normal" });
  const files = fs.readdirSync(root).filter((d) => d.startsWith("s")).flatMap((d) => fs.readdirSync(path.join(root, d)).map((f) => path.join(root, d, f)));
  const jpegs = await Promise.all(files.map((f) => sharp(f).resize(640, 640, { fit: "inside" }).jpeg({ quality: 90 }).toBuffer()));
  for (const jpeg of jpegs.slice(0, 5)) await extractNoseImage(jpeg, options);
  const samples: number[] = [];
  const cpu = process.cpuUsage();
  for (let round = 0; round < 3; round++) {
    for (const jpeg of jpegs) {
      const started = performance.now();
      await extractNoseImage(jpeg, options);
      samples.push(performance.now() - started);
    }
  }
  return { ...quantiles(samples), cpuPerImage: cpuMsSince(cpu) / samples.length, images: jpegs.length };
}

interface HardSet {
  root: string;
  images: string[];
  subjectOf: (image: string) => string;
}

async function hardSet(): Promise<HardSet> {
  const root = path.join(work, "hard");
  await generateDataset({ out: root, subjects, captures: 8, seed: 303, difficulty: "hard" });
  const images = fs.readdirSync(root).filter((d) => d.startsWith("s")).sort().flatMap((d) => fs.readdirSync(path.join(root, d)).sort().map((f) => `${d}/${f}`));
  return { root, images, subjectOf: (image) => image.split("/")[0] };
}

/** Every genuine pair, and a deterministic spread of impostor pairs. */
function choosePairs(set: HardSet): { a: string; b: string; genuine: boolean }[] {
  const pairs: { a: string; b: string; genuine: boolean }[] = [];
  const impostors: { a: string; b: string; genuine: boolean }[] = [];
  for (let i = 0; i < set.images.length; i++) {
    for (let j = i + 1; j < set.images.length; j++) {
      const genuine = set.subjectOf(set.images[i]) === set.subjectOf(set.images[j]);
      (genuine ? pairs : impostors).push({ a: set.images[i], b: set.images[j], genuine });
    }
  }
  const step = Math.max(1, Math.floor(impostors.length / impostorPairs));
  for (let k = 0; k < impostors.length && pairs.length < impostors.length; k += step) {
    pairs.push(impostors[k]);
    if (pairs.filter((p) => !p.genuine).length >= impostorPairs) break;
  }
  return pairs;
}

/**
 * The set's extraction through the engine's worker pool (one thread per core, each extracting whole images), as the
 * service extracts uploads: its wall time per image is the throughput the machine gives, comparable to the peer's
 * wall time, for which OpenCV spreads each image over every core.
 */
async function extractOnEveryCore(jpegs: readonly Buffer[]): Promise<{ msPerImage: number; workers: number }> {
  const workers = engineThreads();
  await Promise.all(jpegs.slice(0, workers * 2).map((jpeg) => analyseImage(jpeg)));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers * 2 }, async () => {
      while (next < jpegs.length) await analyseImage(jpegs[next++]);
    }),
  );
  const msPerImage = (performance.now() - started) / jpegs.length;
  await shutdownEngine();
  return { msPerImage, workers };
}

/**
 * The 1:N full matching of 1 to 5 pets over the engine's workers (`rankOverPool`): six subjects of the reality-matched
 * setting, five pets enrolled from captures 0–4 and the sixth's captures 5–7 as the probe (an unknown animal, as the
 * cascade's steps match 1 to 5 pets for one). Median wall time of 15 runs a count.
 */
async function timeFullMatching(): Promise<void> {
  const root = path.join(work, "real");
  await generateDataset({ out: root, subjects: 6, captures: 8, seed: 505, difficulty: "real" });
  const templatesOf = async (subject: number, captures: number[]) =>
    (await Promise.all(captures.map(async (c) => analyseImage(fs.readFileSync(path.join(root, subjectDirName(subject, 6), captureFileName(c, 8)))))))
      .flatMap((analysis) => (analysis.ok && analysis.template ? [analysis.template] : []));
  const pets = await Promise.all([0, 1, 2, 3, 4].map(async (subject) => ({ petId: `pet-${subject}`, templates: await templatesOf(subject, [0, 1, 2, 3, 4]) })));
  const probe = await templatesOf(5, [5, 6, 7]);
  for (let warm = 0; warm < 3; warm++) await rankOverPool(probe, pets);
  const cells: string[] = [];
  for (let count = 1; count <= pets.length; count++) {
    const samples: number[] = [];
    for (let run = 0; run < 15; run++) {
      const started = performance.now();
      await rankOverPool(probe, pets.slice(0, count));
      samples.push(performance.now() - started);
    }
    cells.push(`${count} ${count === 1 ? "pet" : "pets"} ${ms(quantiles(samples).median)}`);
  }
  console.log(`1:N full matching over ${engineThreads()} engine workers (real setting, 3 probe images, 5 enrolled a pet), median wall: ${cells.join(", ")}`);
}

/**
 * Each set of engine kernels this machine runs (ENGINE_KERNELS: native AVX-512 (VNNI) or AVX2, or none), in
 * this thread on the reality-matched setting's templates: a session comparison of 3 probe images with 5 enrolled in
 * full (nine hypotheses, 300 keypoints) and lightly (the 1:N light comparison: five hypotheses, 60 keypoints), median
 * of 40 runs, the five pets in turn. The kernels give the same results bit for bit (dot-kernel.test.ts).
 */
async function timeEngineKernels(): Promise<void> {
  const root = path.join(work, "real");
  await generateDataset({ out: root, subjects: 6, captures: 8, seed: 505, difficulty: "real" });
  const templatesOf = async (subject: number, captures: number[]) =>
    (await Promise.all(captures.map(async (c) => extractNoseImage(fs.readFileSync(path.join(root, subjectDirName(subject, 6), captureFileName(c, 8))), { outerFrames: true }))))
      .flatMap((result) => (result.ok && result.template ? [result.template] : []));
  const pets = await Promise.all([0, 1, 2, 3, 4].map((subject) => templatesOf(subject, [0, 1, 2, 3, 4])));
  const probe = await templatesOf(5, [5, 6, 7]);
  const light = (templates: NoseTemplate[]) => templates.map((t) => strongestKeypoints(t, RERANK_KEYPOINTS));
  const lightPets = pets.map(light);
  const lightProbe = light(probe);
  const time = (compare: (pet: number) => void) => {
    for (let pet = 0; pet < 10; pet++) compare(pet % pets.length);
    const samples: number[] = [];
    for (let run = 0; run < 40; run++) {
      const started = performance.now();
      compare(run % pets.length);
      samples.push(performance.now() - started);
    }
    return quantiles(samples).median;
  };
  for (const kernel of ENGINE_KERNELS) {
    useEngineKernel(kernel);
    const full = time((pet) => compareSessions(probe, pets[pet]));
    const lightly = time((pet) => compareSessions(lightProbe, lightPets[pet], WHOLE_FRAME_HYPOTHESES));
    console.log(`engine kernels ${kernel}: session comparison, 3 probe images vs 5 enrolled (real setting), in full ${ms(full)}, lightly ${(lightly * 1000).toFixed(0)} µs`);
  }
  useEngineKernel(ENGINE_KERNEL);
}

async function main(): Promise<void> {
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, node ${process.version}; single thread unless stated`);
  if (values.only === "kernels") {
    await timeEngineKernels();
    fs.rmSync(work, { recursive: true, force: true });
    return;
  }
  if (values.only === "full-matching") {
    await timeFullMatching();
    fs.rmSync(work, { recursive: true, force: true });
    return;
  }
  const extractions = [
    ["", {}],
    [" as a 1:N probe (with the outer frames)", { outerFrames: true }],
    [" as a 1:N probe's upload (outer frames and quarter-turned views)", { outerFrames: true, turnedViews: true }],
  ] as const;
  for (const [what, options] of extractions) {
    const extraction = await timeExtraction(options);
    console.log(`extraction, 640 px image${what}: median ${ms(extraction.median)}, p95 ${ms(extraction.p95)}, CPU ${ms(extraction.cpuPerImage)} an image (${extraction.images} images x 3)`);
  }
  if (values.only === "extraction") {
    fs.rmSync(work, { recursive: true, force: true });
    return;
  }

  const set = await hardSet();
  // Read once for the three timings below; each times extraction alone.
  const jpegs = set.images.map((image) => fs.readFileSync(path.join(set.root, image)));
  const templates = new Map<string, NoseTemplate | null>();
  let extractMs = 0;
  const extractCpu = process.cpuUsage();
  for (const [i, image] of set.images.entries()) {
    const started = performance.now();
    const result = await extractNoseImage(jpegs[i]);
    extractMs += performance.now() - started;
    templates.set(image, result.ok ? result.template : null);
  }
  const extractCpuPerImage = cpuMsSince(extractCpu) / set.images.length;
  // The same images as a 1:N probe's (extraction only: the pairs' scores never read the outer frames).
  let probeExtractMs = 0;
  for (const jpeg of jpegs) {
    const started = performance.now();
    await extractNoseImage(jpeg, { outerFrames: true });
    probeExtractMs += performance.now() - started;
  }
  const allCores = await extractOnEveryCore(jpegs);

  // Each subject's templates with their JPEGs: a verification the upright comparison does not accept tries the probe
  // images at a quarter turn (decision 0029), which reads them.
  const bySubject = new Map<string, { template: Uint8Array; jpeg: Uint8Array }[]>();
  for (const [i, image] of set.images.entries()) {
    const t = templates.get(image);
    if (t) bySubject.set(set.subjectOf(image), [...(bySubject.get(set.subjectOf(image)) ?? []), { template: serializeTemplate(t), jpeg: jpegs[i] }]);
  }
  const ids = [...bySubject.keys()].filter((id) => bySubject.get(id)!.length >= 8);
  for (const [what, offset] of [["same nose", 0], ["another nose", 1]] as const) {
    const samples: number[] = [];
    const cpu = process.cpuUsage();
    for (let k = 0; k < Math.min(30, ids.length); k++) {
      const probe = bySubject.get(ids[k])!.slice(5, 8);
      const enrolled = bySubject.get(ids[(k + offset) % ids.length])!.slice(0, 5);
      const started = performance.now();
      await verifyPet(probe.map((p) => p.template), enrolled.map((e) => e.template), probe.map((p) => p.jpeg));
      samples.push(performance.now() - started);
    }
    const verification = quantiles(samples);
    console.log(
      `verification, 3 vs 5 images (hard set), ${what}: median ${ms(verification.median)}, p95 ${ms(verification.p95)}, CPU ${ms(cpuMsSince(cpu) / samples.length)} a run (${samples.length} runs)`,
    );
  }

  const pairs = choosePairs(set);
  const csv = path.join(work, "pairs.csv");
  fs.writeFileSync(csv, `a,b,genuine\n${pairs.map((p) => `${p.a},${p.b},${p.genuine ? 1 : 0}`).join("\n")}\n`);
  let compareMs = 0;
  const compareCpu = process.cpuUsage();
  const ours = pairs.map((p) => {
    const ta = templates.get(p.a);
    const tb = templates.get(p.b);
    if (!ta || !tb) return 0;
    const started = performance.now();
    const { similarity } = compareTemplates(ta, tb);
    compareMs += performance.now() - started;
    return similarity;
  });
  // Includes the few template look-ups between comparisons: CPU of the whole loop, per pair.
  const compareCpuPerPair = cpuMsSince(compareCpu) / pairs.length;
  const peer = await runSiftPeer({ pairsCsv: csv, root: set.root });
  const peerScores = peer.scores.map((s) => s.score);
  const split = (scores: number[]) => ({
    genuine: scores.filter((_, i) => pairs[i].genuine),
    impostor: scores.filter((_, i) => !pairs[i].genuine),
  });
  const report = (name: string, scores: number[], time: { extract: number; extractCpu: number; compare: number; compareCpu: number }) => {
    const { genuine, impostor } = split(scores);
    return { name, auc: areaUnderRoc(genuine, impostor), eer: equalErrorRate(genuine, impostor).eer, ...time };
  };
  const { timings } = peer;
  const rows = [
    report("Rhinarium (TypeScript + WASM SIMD, 1 thread)", ours, {
      extract: extractMs / set.images.length,
      extractCpu: extractCpuPerImage,
      compare: compareMs / pairs.length,
      compareCpu: compareCpuPerPair,
    }),
    report(`OpenCV SIFT + ratio + RANSAC (native, ${timings.threads} threads)`, peerScores, {
      extract: timings.extractMsPerImage,
      extractCpu: timings.extractCpuMsPerImage,
      compare: timings.compareMsPerPair,
      compareCpu: timings.compareCpuMsPerPair,
    }),
  ];
  const genuineCount = pairs.filter((p) => p.genuine).length;
  console.log(`\nimage pairs of the hard set (seed 303, ${subjects} subjects x 8 captures, 160–350 px): ${genuineCount} genuine, ${pairs.length - genuineCount} impostor`);
  console.log("wall and CPU time (CPU: over all the system's threads; the peer's SIFT runs on every core, ours on one)");
  console.log("| system | AUC | EER | extraction ms/image, wall / CPU | comparison ms/pair, wall / CPU |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.auc.toFixed(4)} | ${(r.eer * 100).toFixed(2)} % | ${r.extract.toFixed(1)} / ${r.extractCpu.toFixed(1)} | ${r.compare.toFixed(2)} / ${r.compareCpu.toFixed(2)} |`);
  }
  console.log(`our extraction of the same images as a 1:N probe's (with the outer frames): ${(probeExtractMs / set.images.length).toFixed(1)} ms wall an image`);
  console.log(
    `our extraction on every core (the engine's ${allCores.workers} worker threads, an image each, as the service runs it): ` +
      `${allCores.msPerImage.toFixed(1)} ms wall an image (the set's wall time / its images); the peer's on every core: ${timings.extractMsPerImage.toFixed(1)} ms`,
  );
  const [a, b] = rows;
  const ratio = (x: number, y: number) => (x / y).toFixed(2);
  console.log(
    `ratio (ours / peer): AUC ${(a.auc / b.auc).toFixed(3)}, EER ${(a.eer / b.eer).toFixed(3)}, ` +
      `extraction ${ratio(a.extract, b.extract)} wall / ${ratio(a.extractCpu, b.extractCpu)} CPU, comparison ${ratio(a.compare, b.compare)} wall / ${ratio(a.compareCpu, b.compareCpu)} CPU`,
  );
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
