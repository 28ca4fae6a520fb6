import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCapture, renderCapture } from "./capture";
import { burstLayout, captureFileName, generateDataset, subjectDirName } from "./dataset";
import { createNoseSubject, evaluateSurface, getSurfaceMap } from "./nose-surface";
import { BURST_JITTER, DIFFICULTY, GENERATOR_VERSION } from "./parameters";

/** Mean absolute difference of two equally sized greyscale renderings. */
async function greyDifference(a: Buffer, b: Buffer, size = 96): Promise<number> {
  const [pa, pb] = await Promise.all(
    [a, b].map((img) => sharp(img).resize(size, size, { fit: "fill" }).greyscale().raw().toBuffer()),
  );
  let sum = 0;
  for (let i = 0; i < pa!.length; i++) sum += Math.abs(pa![i]! - pb![i]!);
  return sum / pa!.length;
}

describe("nose surface", () => {
  it("is deterministic per seed and distinct across seeds", () => {
    const a = createNoseSubject(42);
    const b = createNoseSubject(42);
    const c = createNoseSubject(43);
    expect(Array.from(a.plaques.x)).toEqual(Array.from(b.plaques.x));
    expect(a.plaques.count).toBeGreaterThan(150);
    expect(Array.from(c.plaques.x.slice(0, 20))).not.toEqual(Array.from(a.plaques.x.slice(0, 20)));
  });

  it("has dark grooves between brighter plaque tops and dark nostrils", () => {
    const subject = createNoseSubject(7);
    const p = subject.plaques;
    // A seed point is a plaque centre; the midpoint to its nearest neighbour lies on a groove.
    let best = -1;
    let bestD = Infinity;
    for (let k = 1; k < p.count; k++) {
      const d = Math.hypot(p.x[k]! - p.x[0]!, p.y[k]! - p.y[0]!);
      if (d < bestD) {
        bestD = d;
        best = k;
      }
    }
    const top = evaluateSurface(subject, p.x[0]!, p.y[0]!);
    const groove = evaluateSurface(subject, (p.x[0]! + p.x[best]!) / 2, (p.y[0]! + p.y[best]!) / 2);
    expect(top.height).toBeGreaterThan(groove.height);
    expect(top.g).toBeGreaterThan(groove.g);
    const n = subject.nostrils[0];
    // The crescent opening lies lateral to the nostril centre (the alar fold is medial).
    const hole = evaluateSurface(subject, n.centerX - 0.85 * n.radiusX * Math.cos(n.tilt), n.centerY);
    expect(hole.g).toBeLessThan(top.g);
  });

  it("rasterised surface map agrees with direct evaluation", () => {
    const subject = createNoseSubject(11);
    const map = getSurfaceMap(subject, 512);
    let agree = 0;
    const trials = 200;
    for (let i = 0; i < trials; i++) {
      const tx = 100 + ((i * 37) % 312);
      const ty = 100 + ((i * 91) % 312);
      const x = -map.extent + (tx + 0.5) / map.scale;
      const y = -map.extent + (ty + 0.5) / map.scale;
      const direct = evaluateSurface(subject, x, y);
      if (direct.plaque === map.plaqueIds[ty * map.resolution + tx]) agree++;
    }
    expect(agree / trials).toBeGreaterThan(0.95);
  });
});

describe("captures", () => {
  const subject = createNoseSubject(1234);

  for (const difficulty of ["normal", "hard"] as const) {
    it(`${difficulty}: deterministic, valid JPEG, size within range`, async () => {
      const settings = DIFFICULTY[difficulty];
      for (let c = 0; c < 4; c++) {
        const a = await renderCapture(subject, 900 + c, { difficulty });
        const b = await renderCapture(subject, 900 + c, { difficulty });
        expect(a.jpeg.equals(b.jpeg)).toBe(true);
        const meta = await sharp(a.jpeg).metadata();
        expect(meta.format).toBe("jpeg");
        expect(meta.width).toBe(a.width);
        expect(meta.height).toBe(a.height);
        const longest = Math.max(a.width, a.height);
        expect(longest).toBeGreaterThanOrEqual(settings.longestSide[0]);
        expect(longest).toBeLessThanOrEqual(settings.longestSide[1]);
      }
    });
  }

  it("different capture seeds give different views", async () => {
    const a = await renderCapture(subject, 1, { difficulty: "normal" });
    const b = await renderCapture(subject, 2, { difficulty: "normal" });
    expect(a.jpeg.equals(b.jpeg)).toBe(false);
  });

  it("burst frames share pose and size up to small jitter", () => {
    const plan = (seed: number, burstSeed: number) =>
      planCapture(subject, seed, { difficulty: "hard", burst: { seed: burstSeed, frame: 0 } });
    const deg = Math.PI / 180;
    for (let i = 0; i < 10; i++) {
      const f0 = plan(100 + i, 5000 + i);
      const f1 = plan(200 + i, 5000 + i);
      expect(Math.abs(f0.rotation - f1.rotation)).toBeLessThanOrEqual(2 * BURST_JITTER.rotationDeg * deg + 1e-9);
      expect(Math.abs(Math.log(f0.pixelsPerUnit / f1.pixelsPerUnit))).toBeLessThan(0.2);
      expect(f0.lightElevation).toBe(f1.lightElevation);
    }
  });

  it("burst layout covers every capture with frames of 2–4", () => {
    const layout = burstLayout(5, 8, "hard");
    expect(layout).toHaveLength(8);
    expect(layout.every((b) => b !== undefined)).toBe(true);
    expect(burstLayout(5, 8, "normal").every((b) => b === undefined)).toBe(true);
  });
});

describe("dataset", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "synth-test-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function listFiles(dir: string): Promise<string[]> {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
      .sort();
  }

  it("writes the layout and manifest, byte-identical for the same arguments", async () => {
    const options = { subjects: 3, captures: 3, seed: 9, difficulty: "hard" as const };
    const a = path.join(root, "a");
    const b = path.join(root, "b");
    const manifest = await generateDataset({ ...options, out: a });
    await generateDataset({ ...options, out: b });

    const files = await listFiles(a);
    expect(files).toEqual([
      "manifest.json",
      ...[0, 1, 2].flatMap((s) => [0, 1, 2].map((c) => path.join(subjectDirName(s, 3), captureFileName(c, 3)))),
    ]);
    expect(files).toContain(path.join("s00002", "c01.jpg"));
    expect(await listFiles(b)).toEqual(files);
    for (const file of files) {
      expect((await readFile(path.join(a, file))).equals(await readFile(path.join(b, file)))).toBe(true);
    }

    const written = JSON.parse(await readFile(path.join(a, "manifest.json"), "utf8"));
    expect(written).toEqual({ seed: 9, difficulty: "hard", subjects: 3, captures: 3, generatorVersion: GENERATOR_VERSION });
    expect(manifest).toEqual(written);
  });

  it("different subjects look different; different seeds give different data", async () => {
    const out = path.join(root, "c");
    await generateDataset({ out, subjects: 2, captures: 1, seed: 9, difficulty: "normal" });
    const s0 = await readFile(path.join(out, "s00000", "c00.jpg"));
    const s1 = await readFile(path.join(out, "s00001", "c00.jpg"));
    expect(s0.equals(s1)).toBe(false);
    const other = path.join(root, "d");
    await generateDataset({ out: other, subjects: 1, captures: 1, seed: 10, difficulty: "normal" });
    expect((await readFile(path.join(other, "s00000", "c00.jpg"))).equals(s0)).toBe(false);

    // Same pose on two subjects: the images still differ because the surfaces differ.
    const a = await renderCapture(createNoseSubject(1), 5, { difficulty: "normal" });
    const b = await renderCapture(createNoseSubject(2), 5, { difficulty: "normal" });
    expect(await greyDifference(a.jpeg, b.jpeg)).toBeGreaterThan(2);
  });
});
