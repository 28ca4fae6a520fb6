import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { getEngine } from "@/lib/jobs/engine-port";
import { captureFileName, generateDataset, MANIFEST_FILE, subjectDirName } from "@/lib/synth/dataset";
import type { DifficultyName } from "@/lib/synth/parameters";
import { Rng } from "@/lib/synth/prng";
import { quantile } from "./stats";

// 1:N at gallery sizes far beyond what can be enrolled through the API on one machine in minutes.
// Every template comes from the engine's enrolment path (analyseImage on a synthetic JPEG), and every
// search goes through identifyInGallery exactly as the gallery manager calls it. What is synthetic:
// - genuine pets: `genuine` synthetic subjects, enrolled with captures 0–4, probed with captures 5–7;
// - distractor pets: each enrolled with ENROL_IMAGES templates drawn at random from a pool of images of
//   other subjects (one capture of each of `distractorSubjects` subjects, and its mirror image, which
//   to the matcher is another nose). A distractor is thus a mix of several noses; none is a probe's.
// - loadTemplates answers from memory instead of PostgreSQL (the database cost of the shortlist is the
//   same at every gallery size and is measured end to end by the identification job figures).

const ENROL_CAPTURES = [0, 1, 2, 3, 4];
const PROBE_CAPTURES = [5, 6, 7];
const ENROL_IMAGES = 5;
/** Genuine pets searched as unknown animals (taken out of the gallery for their search) at each size. */
const STRANGER_PROBES = 20;

export interface IdentificationBenchOptions {
  sizes: number[];
  genuine: number;
  distractorSubjects: number;
  difficulty: DifficultyName;
  cacheDir: string;
  log: (line: string) => void;
}

export interface GallerySizeResult {
  pets: number;
  p50: number;
  p95: number;
  rank1: number;
  /** Probes whose pet is anywhere among the candidates. */
  found: number;
  galleryBytes: number;
  rssBytes: number;
  upsertPerSecond: number;
  shortlisted: number;
  compared: number;
  /** Latency of an unknown animal's search (STRANGER_PROBES of them), and the share that matched nobody. */
  strangerP50: number;
  strangerP95: number;
  strangersRejected: number;
}

interface Subject {
  enrol: Uint8Array[];
  probe: Uint8Array[];
}

async function dataset(dir: string, subjects: number, captures: number, seed: number, difficulty: DifficultyName): Promise<void> {
  if (fs.existsSync(path.join(dir, MANIFEST_FILE))) return;
  fs.rmSync(dir, { recursive: true, force: true });
  await generateDataset({ out: dir, subjects, captures, seed, difficulty, workers: os.availableParallelism() });
}

/**
 * Engine templates of the given JPEG files, cached per engine version (extraction is the slow part); the files that
 * `isProbe` picks are extracted as 1:N probes are, with the outer frames.
 */
async function templatesOf(cacheFile: string, jpegs: () => Promise<Buffer>[], isProbe: (index: number) => boolean): Promise<(Uint8Array | null)[]> {
  if (fs.existsSync(cacheFile)) return readTemplateCache(cacheFile);
  const engine = await getEngine();
  const sources = jpegs();
  const out: (Uint8Array | null)[] = new Array(sources.length).fill(null);
  let next = 0;
  // A few in flight keep every engine thread busy.
  await Promise.all(
    Array.from({ length: os.availableParallelism() * 2 }, async () => {
      while (next < sources.length) {
        const i = next++;
        const analysis = await engine.analyseImage(await sources[i], { outerFrames: isProbe(i) });
        out[i] = analysis.ok && analysis.quality.usable && analysis.template ? analysis.template : null;
      }
    }),
  );
  writeTemplateCache(cacheFile, out);
  return out;
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

function readTemplateCache(file: string): (Uint8Array | null)[] {
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
  /** Templates distractor pets are mixed from. */
  pool: Uint8Array[];
}

export async function prepareTemplates(options: Omit<IdentificationBenchOptions, "sizes">): Promise<BenchTemplates> {
  const { ENGINE_VERSION } = await getEngine();
  fs.mkdirSync(options.cacheDir, { recursive: true });
  const genuineDir = path.join(options.cacheDir, `genuine-${options.difficulty}-${options.genuine}`);
  const poolDir = path.join(options.cacheDir, `distractors-${options.difficulty}-${options.distractorSubjects}`);
  options.log(`identification: rendering ${options.genuine} genuine subjects x 8 captures and ${options.distractorSubjects} distractor subjects (cached in ${options.cacheDir})`);
  await dataset(genuineDir, options.genuine, 8, 5151, options.difficulty);
  await dataset(poolDir, options.distractorSubjects, 1, 6262, options.difficulty);

  const genuineFiles = Array.from({ length: options.genuine }, (_, s) =>
    Array.from({ length: 8 }, (_, c) => path.join(genuineDir, subjectDirName(s, options.genuine), captureFileName(c, 8))),
  ).flat();
  options.log(`identification: extracting templates (engine version ${ENGINE_VERSION})`);
  const genuine = await templatesOf(
    path.join(options.cacheDir, `${path.basename(genuineDir)}-v${ENGINE_VERSION}.bin`),
    () => genuineFiles.map((f) => fs.promises.readFile(f)),
    (i) => PROBE_CAPTURES.includes(i % 8),
  );
  const subjects: Subject[] = Array.from({ length: options.genuine }, (_, s) => ({
    enrol: ENROL_CAPTURES.map((c) => genuine[s * 8 + c]).filter((t): t is Uint8Array => t !== null),
    probe: PROBE_CAPTURES.map((c) => genuine[s * 8 + c]).filter((t): t is Uint8Array => t !== null),
  }));

  const poolFiles = Array.from({ length: options.distractorSubjects }, (_, s) => path.join(poolDir, subjectDirName(s, options.distractorSubjects), captureFileName(0, 1)));
  const pool = await templatesOf(path.join(options.cacheDir, `${path.basename(poolDir)}-v${ENGINE_VERSION}.bin`), () => [
    ...poolFiles.map((f) => fs.promises.readFile(f)),
    ...poolFiles.map((f) => sharp(f).flop().jpeg({ quality: 92 }).toBuffer()),
  ], () => false);
  return {
    subjects: subjects.filter((s) => s.enrol.length >= 3 && s.probe.length >= 2),
    pool: pool.filter((t): t is Uint8Array => t !== null),
  };
}

/** Distractor pet number `n`'s templates: ENROL_IMAGES drawn from the pool, the same for the same seed. */
export function distractorMix(rng: Rng, poolSize: number): Uint16Array {
  const mix = new Uint16Array(ENROL_IMAGES);
  for (let i = 0; i < ENROL_IMAGES; i++) mix[i] = Math.floor(rng.next() * poolSize);
  return mix;
}

/** Grows one gallery through the sizes (each gallery holds the previous one) and searches it at each. */
export async function benchIdentification(options: IdentificationBenchOptions): Promise<{ results: GallerySizeResult[]; poolTemplates: number; subjects: number }> {
  const { subjects: usable, pool } = await prepareTemplates(options);
  const engine = await getEngine();
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
  const templatesOfPet = (petId: string): Uint8Array[] => {
    const mix = distractors.get(petId);
    if (mix) return [...mix].map((i) => pool[i]);
    return usable[Number(petId.slice(1))].enrol;
  };
  const loadTemplates = async (petIds: string[]) => petIds.map((petId) => ({ petId, templates: templatesOfPet(petId) }));
  const loadLightTemplates = async (petIds: string[]) => petIds.map((petId) => ({ petId, templates: templatesOfPet(petId).map(lightOf) }));

  // Warm the engine threads (code, SIMD kernel) before measuring anything.
  await engine.galleryUpsertPet(key, "g0", usable[0].enrol.map(searchKeyOf));
  await engine.identifyInGallery(key, usable[0].probe, loadTemplates, loadLightTemplates);
  const rssBefore = process.memoryUsage().rss;

  const results: GallerySizeResult[] = [];
  let pets = 0;
  for (const size of [...options.sizes].sort((a, b) => a - b)) {
    const started = performance.now();
    const added = pets;
    const batch: { petId: string; templates: Uint8Array[] }[] = [];
    for (; pets < size; pets++) {
      let petId: string;
      if (pets < usable.length) {
        petId = `g${pets}`;
      } else {
        petId = `d${pets}`;
        distractors.set(petId, distractorMix(rng, pool.length));
      }
      // Search keys in batches, as the gallery manager loads them from the database.
      batch.push({ petId, templates: templatesOfPet(petId).map(searchKeyOf) });
      if (batch.length >= 500) await engine.galleryUpsertPets(key, batch.splice(0));
    }
    await engine.galleryUpsertPets(key, batch);
    const upsertPerSecond = (pets - added) / ((performance.now() - started) / 1000);
    const stats = await engine.galleryStats(key);
    const rssBytes = process.memoryUsage().rss - rssBefore;

    const latencies: number[] = [];
    let rank1 = 0;
    let found = 0;
    let shortlisted = 0;
    let compared = 0;
    for (let s = 0; s < usable.length; s++) {
      const t0 = performance.now();
      const outcome = await engine.identifyInGallery(key, usable[s].probe, loadTemplates, loadLightTemplates);
      latencies.push(performance.now() - t0);
      if (outcome.candidates[0]?.petId === `g${s}`) rank1++;
      if (outcome.candidates.some((c) => c.petId === `g${s}`)) found++;
      shortlisted += outcome.details.shortlisted;
      compared += outcome.details.compared;
    }
    // Unknown animals: a genuine pet's probe with that pet taken out of the gallery (a real nose nobody enrolled),
    // which runs the cascade's deep pass (docs/engine.md, format 8). The pet is put back afterwards.
    const strangerLatencies: number[] = [];
    let strangersRejected = 0;
    for (let s = 0; s < Math.min(STRANGER_PROBES, usable.length); s++) {
      await engine.galleryRemovePet(key, `g${s}`);
      const t0 = performance.now();
      const outcome = await engine.identifyInGallery(key, usable[s].probe, loadTemplates, loadLightTemplates);
      strangerLatencies.push(performance.now() - t0);
      if (outcome.candidates.length === 0) strangersRejected++;
      await engine.galleryUpsertPets(key, [{ petId: `g${s}`, templates: templatesOfPet(`g${s}`).map(searchKeyOf) }]);
    }
    const result: GallerySizeResult = {
      pets: stats.pets,
      p50: quantile(latencies, 0.5),
      p95: quantile(latencies, 0.95),
      rank1: rank1 / usable.length,
      found: found / usable.length,
      galleryBytes: stats.bytes,
      rssBytes,
      upsertPerSecond,
      shortlisted: shortlisted / usable.length,
      compared: compared / usable.length,
      strangerP50: quantile(strangerLatencies, 0.5),
      strangerP95: quantile(strangerLatencies, 0.95),
      strangersRejected: strangersRejected / strangerLatencies.length,
    };
    options.log(`identification: ${JSON.stringify(result)}`);
    results.push(result);
  }
  await engine.galleryDrop(key);
  return { results, poolTemplates: pool.length, subjects: usable.length };
}
