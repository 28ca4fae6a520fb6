import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { startProgress } from "@/lib/progress";
import * as engine from "@/lib/engine";
import { ENGINE_VERSION, type ProbeTurns } from "@/lib/engine";
import { captureFileName, generateDataset, MANIFEST_FILE, subjectDirName } from "@/lab/synth/dataset";
import type { DifficultyName } from "@/lab/synth/parameters";
import type { Roll } from "@/lab/synth/capture";
import { Rng } from "@/lab/synth/prng";
import { softCapture, YARDSTICK_SEED } from "@/lab/synth/soft-capture";
import { cpuMsBetween, quantile } from "./stats";

// 1:N at gallery sizes far beyond what can be enrolled through the API on one machine in minutes.
// Every template comes from the engine's enrolment path (analyseImage on a synthetic JPEG), and every
// search goes through identifyInGallery exactly as the gallery manager calls it. What is synthetic:
// - enrolled animals: for each probe setting (`settings`: the hard setting, the reality-matched one…), `genuine`
//   synthetic subjects enrolled with captures 0–4 and probed with captures 5–7 (extracted as 1:N probes are);
// - unknown animals: `strangers` more subjects of each setting, never enrolled, probed with captures 5–7;
// - distractor pets: each enrolled with ENROL_IMAGES templates drawn at random from a pool of images of
//   other subjects (one capture of each of `distractorSubjects` subjects of `difficulty`, and its mirror image,
//   which to the matcher is another nose). A distractor is thus a mix of several noses; none is a probe's.
// - loadTemplates answers from memory instead of PostgreSQL (the database cost of the shortlist is the
//   same at every gallery size and is measured end to end by the identification job figures).

export const ENROL_CAPTURES = [0, 1, 2, 3, 4];
export const PROBE_CAPTURES = [5, 6, 7];
const ENROL_IMAGES = 5;
/**
 * The seed of each probe setting's subjects. A subject's nose depends on the seed alone, not on the
 * setting (lab/synth/dataset.ts subjectSeed): with one seed for every setting, subject i of the real
 * setting would be the same animal as subject i of the hard setting, enrolled in the same gallery.
 */
const PROBE_SET_SEEDS: Record<ProbeSetting, number> = { normal: 5050, hard: 5151, real: 5252, "real-any": 5353, "real-soft": 5454 };

/**
 * A probe set's generator setting: a difficulty (lab/synth/parameters.ts); `real-any`, the reality-matched setting
 * with every capture at any roll (`npm run synth -- --roll any`: a dog lying on its side, a phone held sideways), whose
 * searches reach the cascade's turned pass (decision 0029); or `real-soft`, the reality-matched setting enrolled sharp
 * and probed with captures blurred and darkened the way real genuine pairs fail (lab/synth/soft-capture.ts).
 */
export const PROBE_SETTINGS = ["normal", "hard", "real", "real-any", "real-soft"] as const;
export type ProbeSetting = (typeof PROBE_SETTINGS)[number];

/** The generator options a probe setting renders with. */
function generatorOptionsOf(setting: ProbeSetting): { difficulty: DifficultyName; roll?: Roll } {
  if (setting === "real-any") return { difficulty: "real", roll: "any" };
  return { difficulty: setting === "real-soft" ? "real" : setting };
}

export interface IdentificationBenchOptions {
  sizes: number[];
  /** Enrolled subjects per probe setting. */
  genuine: number;
  /** Unknown animals (never enrolled) per probe setting. */
  strangers: number;
  /** Generator settings of the probe sets (a row each, enrolled and unknown). */
  settings: ProbeSetting[];
  distractorSubjects: number;
  /** The distractor pool's setting. */
  difficulty: DifficultyName;
  cacheDir: string;
  log: (line: string) => void;
}

/** One row: a probe set's searches at one gallery size. */
export interface ProbeRow {
  setting: ProbeSetting;
  kind: "enrolled" | "unknown";
  probes: number;
  p50: number;
  p95: number;
  max: number;
  /** Enrolled: the probe's pet first; unknown: nobody returned (the right answer). */
  rank1: number;
  /** Enrolled: the probe's pet anywhere among the candidates. */
  found: number;
  /** Searches that needed the deep pass. */
  deep: number;
  shortlisted: number;
  reranked: number;
  compared: number;
  /** Medians of the cascade's phases (ms), timed from the loader calls: fast first stage + its full matching, deep pass. */
  fastMs: number;
  deepMs: number;
  /** Median CPU time of a search, every thread of the process (not stretched by other processes' load). */
  cpuMs: number;
  /**
   * Mean CPU time of a search in each step of the cascade (`${pass} ${step}`: "fast first stage", "deep light",
   * "turned views", …; runCascade's observer), every thread, from the step's start to the next one's or the search's end.
   */
  stepCpuMs: Record<string, number>;
}

export interface GallerySizeResult {
  pets: number;
  rows: ProbeRow[];
  galleryBytes: number;
  rssBytes: number;
  upsertPerSecond: number;
  /** The gallery saved to disk and restored from there (a restarted process's load, decision 0041): pets a second each. */
  savePerSecond: number;
  restorePerSecond: number;
  /** The longest another task on the gallery's threads waited while the gallery was saved. */
  saveStallMs: number;
}

interface Subject {
  enrol: Uint8Array[];
  probe: Uint8Array[];
  /** The probe images' quarter-turned views, as their upload made them, in their order: a search whose upright passes accept nobody compares them (decisions 0029, 0042). */
  probeTurns?: ProbeTurns[];
}

async function dataset(dir: string, subjects: number, captures: number, seed: number, generator: { difficulty: DifficultyName; roll?: Roll }): Promise<void> {
  if (fs.existsSync(path.join(dir, MANIFEST_FILE))) return;
  fs.rmSync(dir, { recursive: true, force: true });
  await generateDataset({ out: dir, subjects, captures, seed, ...generator, workers: os.availableParallelism() });
}

/**
 * Engine templates of the given JPEG files, cached per engine version (extraction is the slow part); the files that
 * `isProbe` picks are extracted as a 1:N probe's upload extracts them (`extractionFor`): with the outer frames, and
 * with the quarter-turned views its turned pass reads (`turnedViews`, beside the templates; decision 0042).
 */
async function templatesOf(
  cacheFile: string,
  jpegs: () => Promise<Buffer>[],
  isProbe: (index: number) => boolean,
): Promise<{ templates: (Uint8Array | null)[]; turnedViews: (Uint8Array | null)[] }> {
  const viewsFile = cacheFile.replace(/\.bin$/, "-turned-views.bin");
  if (fs.existsSync(cacheFile) && fs.existsSync(viewsFile)) return { templates: readTemplateCache(cacheFile), turnedViews: readTemplateCache(viewsFile) };
  const sources = jpegs();
  const out: (Uint8Array | null)[] = new Array(sources.length).fill(null);
  const views: (Uint8Array | null)[] = new Array(sources.length).fill(null);
  const progress = startProgress(`extracting ${path.basename(cacheFile)}`, sources.length);
  let next = 0;
  // A few in flight keep every engine thread busy.
  await Promise.all(
    Array.from({ length: os.availableParallelism() * 2 }, async () => {
      while (next < sources.length) {
        const i = next++;
        const analysis = await engine.analyseImage(await sources[i], { outerFrames: isProbe(i), turnedViews: isProbe(i) });
        out[i] = analysis.ok && analysis.quality.usable && analysis.template ? analysis.template : null;
        views[i] = out[i] && analysis.ok ? analysis.turnedViews : null;
        progress.tick();
      }
    }),
  );
  progress.stop();
  writeTemplateCache(cacheFile, out);
  writeTemplateCache(viewsFile, views);
  return { templates: out, turnedViews: views };
}

/** No template (an unusable image): a length no template has. */
const NO_TEMPLATE = 0xffffffff;

/**
 * The cache as binary records (a 4-byte length, then the template): thousands of ~120 KB templates
 * are more than one JavaScript string can hold, as JSON with base64 they were.
 */
function writeTemplateCache(file: string, templates: (Uint8Array | null)[]): void {
  const fd = fs.openSync(file + ".tmp", "w");
  try {
    for (const t of templates) {
      const length = Buffer.alloc(4);
      length.writeUInt32LE(t ? t.byteLength : NO_TEMPLATE);
      fs.writeSync(fd, length);
      if (t) fs.writeSync(fd, t);
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(file + ".tmp", file);
}

export function readTemplateCache(file: string): (Uint8Array | null)[] {
  const bytes = fs.readFileSync(file);
  const out: (Uint8Array | null)[] = [];
  for (let at = 0; at < bytes.byteLength; ) {
    const length = bytes.readUInt32LE(at);
    at += 4;
    if (length === NO_TEMPLATE) out.push(null);
    else {
      out.push(new Uint8Array(bytes.subarray(at, at + length)));
      at += length;
    }
  }
  return out;
}

export interface BenchTemplates {
  /** Genuine subjects with at least 3 enrolment and 2 probe templates. */
  subjects: Subject[];
  /** Probes of animals never enrolled. */
  strangers: Uint8Array[][];
  /** Templates distractor pets are mixed from. */
  pool: Uint8Array[];
}

/** The distractor subjects' images (one capture of each), rendered once into the cache directory. */
export async function distractorPoolFiles(options: Omit<IdentificationBenchOptions, "sizes">): Promise<{ poolDir: string; poolFiles: string[] }> {
  fs.mkdirSync(options.cacheDir, { recursive: true });
  const poolDir = path.join(options.cacheDir, `distractors-${options.difficulty}-${options.distractorSubjects}`);
  options.log(`identification: rendering ${options.distractorSubjects} distractor subjects (cached in ${options.cacheDir})`);
  await dataset(poolDir, options.distractorSubjects, 1, 6262, { difficulty: options.difficulty });
  return { poolDir, poolFiles: Array.from({ length: options.distractorSubjects }, (_, s) => path.join(poolDir, subjectDirName(s, options.distractorSubjects), captureFileName(0, 1))) };
}

/** The templates distractor pets are mixed from: one capture of each distractor subject, and its mirror image. */
async function preparePool(options: Omit<IdentificationBenchOptions, "sizes">): Promise<Uint8Array[]> {
  const { poolDir, poolFiles } = await distractorPoolFiles(options);
  const { templates: pool } = await templatesOf(path.join(options.cacheDir, `${path.basename(poolDir)}-v${ENGINE_VERSION}.bin`), () => [
    ...poolFiles.map((f) => fs.promises.readFile(f)),
    ...poolFiles.map((f) => sharp(f).flop().jpeg({ quality: 92 }).toBuffer()),
  ], () => false);
  return pool.filter((t): t is Uint8Array => t !== null);
}

/** The first probe setting's enrolled subjects (enrolled with captures 0–4, probed with 5–7) and the distractor pool. */
export async function prepareTemplates(options: Omit<IdentificationBenchOptions, "sizes">): Promise<BenchTemplates> {
  const set = await prepareProbeSet(options.settings[0] ?? options.difficulty, options);
  return { subjects: set.enrolled, strangers: set.strangers, pool: await preparePool(options) };
}

/** Distractor pet number `n`'s templates: ENROL_IMAGES drawn from the pool, the same for the same seed. */
export function distractorMix(rng: Rng, poolSize: number): Uint16Array {
  const mix = new Uint16Array(ENROL_IMAGES);
  for (let i = 0; i < ENROL_IMAGES; i++) mix[i] = Math.floor(rng.next() * poolSize);
  return mix;
}


interface ProbeSet {
  setting: ProbeSetting;
  /** Enrolled subjects (pet ids `${setting}-g${i}`) with at least 3 enrolment and 2 probe templates. */
  enrolled: Subject[];
  /** Never enrolled: probes only. */
  strangers: Uint8Array[][];
  /** Each unknown animal's probe images' quarter-turned views, as their upload made them, in its probe templates' order. */
  strangerTurns: ProbeTurns[][];
}

/**
 * A setting's subjects' images, rendered once into the cache directory: `genuine` subjects to enrol (captures
 * ENROL_CAPTURES) and probe (PROBE_CAPTURES), then `strangers` never enrolled; by subject, then capture.
 */
export async function probeSetFiles(setting: ProbeSetting, options: Omit<IdentificationBenchOptions, "sizes">): Promise<{ dir: string; files: string[][] }> {
  const subjects = options.genuine + options.strangers;
  const seed = PROBE_SET_SEEDS[setting];
  const dir = path.join(options.cacheDir, `probes-${setting}-${subjects}-s${seed}`);
  const rendered = setting === "real-soft" ? `${dir}-sharp` : dir;
  options.log(`identification: rendering ${subjects} subjects x 8 captures, ${setting} setting`);
  await dataset(rendered, subjects, 8, seed, generatorOptionsOf(setting));
  const file = (root: string, s: number, c: number) => path.join(root, subjectDirName(s, subjects), captureFileName(c, 8));
  const files = Array.from({ length: subjects }, (_, s) => Array.from({ length: 8 }, (_, c) => file(rendered, s, c)));
  if (setting !== "real-soft") return { dir, files };
  // Soft probes: the probe captures degraded into `dir`, the enrolment captures read from the sharp set.
  for (let s = 0; s < subjects; s++) {
    for (const c of PROBE_CAPTURES) {
      const soft = file(dir, s, c);
      if (!fs.existsSync(soft)) {
        fs.mkdirSync(path.dirname(soft), { recursive: true });
        fs.writeFileSync(soft + ".tmp", await softCapture(fs.readFileSync(files[s][c]), YARDSTICK_SEED, s, c));
        fs.renameSync(soft + ".tmp", soft);
      }
      files[s][c] = soft;
    }
  }
  return { dir, files };
}

/** A setting's enrolled subjects and unknown animals, rendered and extracted once (cached per engine version). */
async function prepareProbeSet(setting: ProbeSetting, options: Omit<IdentificationBenchOptions, "sizes">): Promise<ProbeSet> {
  const { dir, files: bySubject } = await probeSetFiles(setting, options);
  const files = bySubject.flat();
  const { templates, turnedViews } = await templatesOf(
    path.join(options.cacheDir, `${path.basename(dir)}-v${ENGINE_VERSION}.bin`),
    () => files.map((f) => fs.promises.readFile(f)),
    (i) => PROBE_CAPTURES.includes(i % 8),
  );
  const of = (s: number, captures: number[]) => captures.map((c) => templates[s * 8 + c]).filter((t): t is Uint8Array => t !== null);
  const turnsOf = (s: number, captures: number[]) => captures.filter((c) => templates[s * 8 + c] !== null).map((c) => ({ views: turnedViews[s * 8 + c] }));
  const enrolled = Array.from({ length: options.genuine }, (_, s) => ({ enrol: of(s, ENROL_CAPTURES), probe: of(s, PROBE_CAPTURES), probeTurns: turnsOf(s, PROBE_CAPTURES) }));
  const strangers = Array.from({ length: options.strangers }, (_, i) => ({ probe: of(options.genuine + i, PROBE_CAPTURES), probeTurns: turnsOf(options.genuine + i, PROBE_CAPTURES) }));
  const probing = strangers.filter((stranger) => stranger.probe.length >= 2);
  return {
    setting,
    enrolled: enrolled.filter((s) => s.enrol.length >= 3 && s.probe.length >= 2),
    strangers: probing.map((stranger) => stranger.probe),
    strangerTurns: probing.map((stranger) => stranger.probeTurns),
  };
}

/**
 * Saves the gallery's shards to files and restores them into a second gallery (as a restarted process does, from the
 * page cache: the files were just written), which must hold the same pets; the copy is dropped and the files removed.
 */
async function saveAndRestore(key: string, pets: number): Promise<{ savePerSecond: number; restorePerSecond: number; saveStallMs: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-snapshot-"));
  const paths = Array.from({ length: engine.engineThreads() }, (_, slot) => path.join(dir, `${slot}.shard`));
  try {
    // Meanwhile a small task on every shard's thread, again and again: how long one waits behind the save's slices.
    let saving = true;
    const waits: number[] = [];
    const meanwhile = (async () => {
      while (saving) {
        const asked = performance.now();
        await engine.galleryStats(key);
        waits.push(performance.now() - asked);
      }
    })();
    let started = performance.now();
    await engine.gallerySave(key, paths);
    const savePerSecond = pets / ((performance.now() - started) / 1000);
    saving = false;
    await meanwhile;
    started = performance.now();
    const restored = await engine.galleryRestore(`${key}/restored`, paths);
    const restorePerSecond = pets / ((performance.now() - started) / 1000);
    if (restored.pets !== pets) throw new Error(`the restored gallery holds ${restored.pets} pets, not ${pets}`);
    return { savePerSecond, restorePerSecond, saveStallMs: Math.max(0, ...waits) };
  } finally {
    await engine.galleryDrop(`${key}/restored`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Grows one gallery through the sizes (each gallery holds the previous one) and searches it at each. */
export async function benchIdentification(options: IdentificationBenchOptions): Promise<{ results: GallerySizeResult[]; poolTemplates: number; sets: { setting: ProbeSetting; enrolled: number; strangers: number }[] }> {
  const pool = await preparePool(options);
  const sets: ProbeSet[] = [];
  for (const setting of options.settings) sets.push(await prepareProbeSet(setting, options));
  const key = `bench/${process.pid}`;
  await engine.galleryDrop(key);

  // What the database columns keep of each image, cut once per template.
  const cutOnce = (cut: (template: Uint8Array) => Uint8Array) => {
    const cuts = new Map<Uint8Array, Uint8Array>();
    return (template: Uint8Array) => {
      let part = cuts.get(template);
      if (!part) cuts.set(template, (part = cut(template)));
      return part;
    };
  };
  const searchKeyOf = cutOnce(engine.searchKeyOfTemplate);
  const lightOf = cutOnce(engine.lightTemplateOf);
  const rng = new Rng(777);
  const distractors = new Map<string, Uint16Array>();
  const genuine = new Map<string, Uint8Array[]>();
  for (const set of sets) set.enrolled.forEach((subject, i) => genuine.set(`${set.setting}-g${i}`, subject.enrol));
  const genuineIds = [...genuine.keys()];
  const templatesOfPet = (petId: string): Uint8Array[] => {
    const mix = distractors.get(petId);
    return mix ? [...mix].map((i) => pool[i]) : (genuine.get(petId) ?? []);
  };
  // Each search's phases, from when the engine asks for templates: the fast pass's light templates, then its promoted
  // pets' full ones; the deep pass begins where the engine asks for light templates a second time.
  let lightLoads: number[] = [];
  const loadTemplates = async (petIds: string[]) => petIds.map((petId) => ({ petId, templates: templatesOfPet(petId) }));
  const loadLightTemplates = async (petIds: string[]) => {
    lightLoads.push(performance.now());
    return petIds.map((petId) => ({ petId, templates: templatesOfPet(petId).map(lightOf) }));
  };

  // Warm the engine threads (code, SIMD kernel) before measuring anything.
  const warm = sets[0].enrolled[0];
  await engine.galleryUpsertPet(key, "warm", warm.enrol.map(searchKeyOf));
  await engine.identifyInGallery(key, warm.probe, loadTemplates, loadLightTemplates);
  await engine.galleryRemovePet(key, "warm");
  const rssBefore = process.memoryUsage().rss;

  const search = async (probe: Uint8Array[], probeTurns?: ProbeTurns[]) => {
    lightLoads = [];
    const steps: { step: string; cpu: NodeJS.CpuUsage }[] = [];
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const outcome = await engine.identifyInGallery(key, probe, loadTemplates, loadLightTemplates, probeTurns, (pass, step) => {
      steps.push({ step: `${pass} ${step}`, cpu: process.cpuUsage() });
    });
    const total = performance.now() - t0;
    const end = process.cpuUsage();
    const cpuMs = cpuMsBetween(cpu, end);
    const stepCpuMs: Record<string, number> = {};
    steps.forEach(({ step, cpu: from }, i) => (stepCpuMs[step] = (stepCpuMs[step] ?? 0) + cpuMsBetween(from, steps[i + 1]?.cpu ?? end)));
    const deep = lightLoads.length > 1;
    const fastEnd = deep ? lightLoads[1] - t0 : total;
    return { outcome, total, deep, fastMs: fastEnd, deepMs: total - fastEnd, cpuMs, stepCpuMs };
  };
  const row = (setting: ProbeSetting, kind: ProbeRow["kind"], searches: Awaited<ReturnType<typeof search>>[], right: boolean[], found: boolean[]): ProbeRow => {
    const mean = (f: (s: (typeof searches)[number]) => number) => searches.reduce((sum, s) => sum + f(s), 0) / Math.max(1, searches.length);
    const latencies = searches.map((s) => s.total);
    return {
      setting,
      kind,
      probes: searches.length,
      p50: quantile(latencies, 0.5),
      p95: quantile(latencies, 0.95),
      max: Math.max(...latencies),
      rank1: right.filter(Boolean).length / Math.max(1, right.length),
      found: found.filter(Boolean).length / Math.max(1, found.length),
      deep: searches.filter((s) => s.deep).length / Math.max(1, searches.length),
      shortlisted: mean((s) => s.outcome.details.shortlisted),
      reranked: mean((s) => s.outcome.details.reranked),
      compared: mean((s) => s.outcome.details.compared),
      fastMs: quantile(searches.map((s) => s.fastMs), 0.5),
      deepMs: quantile(searches.filter((s) => s.deep).map((s) => s.deepMs), 0.5) || 0,
      cpuMs: quantile(searches.map((s) => s.cpuMs), 0.5),
      stepCpuMs: Object.fromEntries(
        [...new Set(searches.flatMap((s) => Object.keys(s.stepCpuMs)))].map((step) => [step, mean((s) => s.stepCpuMs[step] ?? 0)]),
      ),
    };
  };

  const results: GallerySizeResult[] = [];
  let pets = 0;
  for (const size of [...options.sizes].sort((a, b) => a - b)) {
    const started = performance.now();
    const added = pets;
    const batch: { petId: string; templates: Uint8Array[] }[] = [];
    for (; pets < size; pets++) {
      let petId: string;
      if (pets < genuineIds.length) {
        petId = genuineIds[pets];
      } else {
        petId = `d${pets}`;
        distractors.set(petId, distractorMix(rng, pool.length));
      }
      // Search keys in batches, as the gallery manager loads them from the database.
      batch.push({ petId, templates: templatesOfPet(petId).map(searchKeyOf) });
      if (batch.length >= 500) await engine.galleryUpsertPets(key, engine.packPets(batch.splice(0)));
    }
    await engine.galleryUpsertPets(key, engine.packPets(batch));
    const upsertPerSecond = (pets - added) / ((performance.now() - started) / 1000);
    const stats = await engine.galleryStats(key);
    const rssBytes = process.memoryUsage().rss - rssBefore;
    const { savePerSecond, restorePerSecond, saveStallMs } = await saveAndRestore(key, stats.pets);

    const rows: ProbeRow[] = [];
    const progress = startProgress(`searching ${size.toLocaleString("en")} pets`, sets.reduce((sum, set) => sum + set.enrolled.length + set.strangers.length, 0));
    for (const set of sets) {
      const searches: Awaited<ReturnType<typeof search>>[] = [];
      const right: boolean[] = [];
      const found: boolean[] = [];
      for (let s = 0; s < set.enrolled.length; s++) {
        const petId = `${set.setting}-g${s}`;
        const done = await search(set.enrolled[s].probe, set.enrolled[s].probeTurns);
        progress.tick();
        searches.push(done);
        right.push(done.outcome.candidates[0]?.petId === petId);
        found.push(done.outcome.candidates.some((c) => c.petId === petId));
      }
      rows.push(row(set.setting, "enrolled", searches, right, found));
      const unknown: Awaited<ReturnType<typeof search>>[] = [];
      for (const [i, probe] of set.strangers.entries()) {
        unknown.push(await search(probe, set.strangerTurns[i]));
        progress.tick();
      }
      const nobody = unknown.map((s) => s.outcome.candidates.length === 0);
      rows.push(row(set.setting, "unknown", unknown, nobody, nobody));
    }
    progress.stop();
    const result: GallerySizeResult = { pets: stats.pets, rows, galleryBytes: stats.bytes, rssBytes, upsertPerSecond, savePerSecond, restorePerSecond, saveStallMs };
    options.log(`identification: ${JSON.stringify(result)}`);
    results.push(result);
  }
  await engine.galleryDrop(key);
  return {
    results,
    poolTemplates: pool.length,
    sets: sets.map((set) => ({ setting: set.setting, enrolled: set.enrolled.length, strangers: set.strangers.length })),
  };
}
