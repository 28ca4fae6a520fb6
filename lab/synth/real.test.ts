import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { planBackdrop } from "./backdrop";
import { backdropFractionOf, planCapture, renderCapture, rollDegrees } from "./capture";
import { burstLayout, captureOptionsFor, captureSeed, createSubjectFor, generateDataset, subjectSeed } from "./dataset";
import { viewTurn } from "./dome-camera";
import { GENERATOR_VERSION, REAL } from "./parameters";
import { Rng } from "./prng";

const deg = Math.PI / 180;
const bytes = (data: Float32Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);

describe('the "real" setting', () => {
  const seed = subjectSeed(7, 0);
  const subject = createSubjectFor("real", seed);

  it("is deterministic per seed: same bytes twice, square crops within the real size range", async () => {
    const [low, high] = [REAL.cropSizeQuantiles[0][1], REAL.cropSizeQuantiles.at(-1)![1]];
    for (let c = 0; c < 3; c++) {
      const options = captureOptionsFor({ seed: 7, difficulty: "real", backdrop: "textured" }, undefined);
      const a = await renderCapture(subject, captureSeed(seed, c), options);
      const b = await renderCapture(subject, captureSeed(seed, c), options);
      expect(a.jpeg.equals(b.jpeg)).toBe(true);
      expect(a.width).toBe(a.height);
      expect(a.width).toBeGreaterThanOrEqual(low);
      expect(a.width).toBeLessThanOrEqual(high);
      const meta = await sharp(a.jpeg).metadata();
      expect([meta.format, meta.width]).toEqual(["jpeg", a.width]);
    }
    const other = await renderCapture(subject, captureSeed(seed, 0), { difficulty: "real" });
    const next = await renderCapture(subject, captureSeed(seed, 1), { difficulty: "real" });
    expect(other.jpeg.equals(next.jpeg)).toBe(false);
  });

  it("turns the viewpoint between captures of a nose by at most REAL.maxViewTurnDeg, and uses most of that", () => {
    let widest = 0;
    for (let s = 0; s < 6; s++) {
      const sSeed = subjectSeed(3, s);
      const nose = createSubjectFor("real", sSeed);
      const bursts = burstLayout(sSeed, 12, "real");
      const cameras = bursts.map((burst, c) => planCapture(nose, captureSeed(sSeed, c), captureOptionsFor({ seed: 3, difficulty: "real" }, burst)).camera!);
      for (const camera of cameras) expect(camera.offAxis).toBeLessThanOrEqual((REAL.maxViewTurnDeg / 2) * deg + 1e-12);
      for (let i = 0; i < cameras.length; i++) {
        for (let j = i + 1; j < cameras.length; j++) {
          const turn = viewTurn(cameras[i]!, cameras[j]!);
          expect(turn).toBeLessThanOrEqual(REAL.maxViewTurnDeg * deg + 1e-9);
          widest = Math.max(widest, turn);
        }
      }
    }
    expect(widest).toBeGreaterThan(0.6 * REAL.maxViewTurnDeg * deg);
  });

  it("keeps burst frames near-duplicates: the same view up to jitter, the same light and backdrop", () => {
    const bursts = burstLayout(seed, 12, "real");
    const plans = bursts.map((burst, c) =>
      planCapture(subject, captureSeed(seed, c), captureOptionsFor({ seed: 7, difficulty: "real", backdrop: "textured" }, burst)),
    );
    let pairs = 0;
    for (let i = 0; i + 1 < plans.length; i++) {
      if (bursts[i]!.seed !== bursts[i + 1]!.seed) continue;
      pairs++;
      expect(viewTurn(plans[i]!.camera!, plans[i + 1]!.camera!)).toBeLessThan(3 * REAL.burstViewJitterDeg * deg);
      expect(plans[i]!.lightElevation).toBe(plans[i + 1]!.lightElevation);
      expect(bytes(plans[i]!.backdrop!.data).equals(bytes(plans[i + 1]!.backdrop!.data))).toBe(true);
    }
    expect(pairs).toBeGreaterThan(0);
  });

  it("shares one backdrop pattern across every capture of a set with a shared backdrop, and only then", () => {
    for (const kind of ["shared-periodic", "shared-textured"] as const) {
      const a = planBackdrop(kind, 42, new Rng(1));
      const b = planBackdrop(kind, 42, new Rng(2));
      const otherSet = planBackdrop(kind, 43, new Rng(1));
      expect(bytes(a.texture.data).equals(bytes(b.texture.data))).toBe(true);
      expect(bytes(a.texture.data).equals(bytes(otherSet.texture.data))).toBe(false);
    }
    const own1 = planBackdrop("textured", 42, new Rng(1));
    const own2 = planBackdrop("textured", 42, new Rng(2));
    expect(bytes(own1.texture.data).equals(bytes(own2.texture.data))).toBe(false);
  });

  it("shows the backdrop around the nose: changing only the shared pattern changes the crop's border, not its centre", async () => {
    const render = async (c: number, setSeed: number) => {
      const { jpeg } = await renderCapture(subject, captureSeed(seed, c), { difficulty: "real", backdrop: { kind: "shared-periodic", setSeed } });
      return sharp(jpeg).resize(64, 64, { fit: "fill" }).greyscale().raw().toBuffer();
    };
    let widestBorder = 0;
    for (let c = 0; c < 4; c++) {
      const [a, b] = await Promise.all([render(c, 1), render(c, 2)]);
      let border = 0;
      let centre = 0;
      for (let y = 0; y < 64; y++) {
        for (let x = 0; x < 64; x++) {
          const d = Math.abs(a[y * 64 + x]! - b[y * 64 + x]!);
          const r = Math.hypot(x - 31.5, y - 31.5);
          if (r > 30) border = Math.max(border, d);
          if (r < 12) centre = Math.max(centre, d);
        }
      }
      // Exposure meters the whole crop, so the backdrop shifts the pad's grey a little, never its pattern.
      expect(centre).toBeLessThanOrEqual(Math.max(2, 0.35 * border));
      widestBorder = Math.max(widestBorder, border);
    }
    expect(widestBorder).toBeGreaterThan(10);
  });

  it("leaves the geometry of a capture independent of the backdrop (ground truth needs no backdrop)", () => {
    const withBackdrop = planCapture(subject, 5, { difficulty: "real", backdrop: { kind: "shared-periodic", setSeed: 9 } });
    const without = planCapture(subject, 5, { difficulty: "real" });
    expect(withBackdrop.camera!.position).toEqual(without.camera!.position);
    expect(withBackdrop.pixelsPerUnit).toBe(without.pixelsPerUnit);
  });

  it("frames loosely on request: the backdrop fills a fifth of the crop or more, the same view otherwise", () => {
    const fractions = { tight: [] as number[], loose: [] as number[] };
    for (let s = 0; s < 6; s++) {
      const sSeed = subjectSeed(13, s);
      const nose = createSubjectFor("real", sSeed);
      const bursts = burstLayout(sSeed, 8, "real");
      for (let c = 0; c < 8; c++) {
        const plan = (framing: "tight" | "loose") =>
          planCapture(nose, captureSeed(sSeed, c), captureOptionsFor({ seed: 13, difficulty: "real", backdrop: "shared-periodic", framing }, bursts[c]));
        const [tight, loose] = [plan("tight"), plan("loose")];
        // The same camera and pose: only the crop reaches farther out.
        expect(loose.camera!.position).toEqual(tight.camera!.position);
        expect(loose.rotation).toBe(tight.rotation);
        expect(loose.pixelsPerUnit).toBeLessThan(tight.pixelsPerUnit);
        fractions.tight.push(backdropFractionOf(tight));
        fractions.loose.push(backdropFractionOf(loose));
      }
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1]!;
    expect(median(fractions.loose)).toBeGreaterThanOrEqual(0.2);
    expect(median(fractions.tight)).toBeLessThan(0.1);
    expect(Math.min(...fractions.loose)).toBeGreaterThan(0.03);
  });

  it("turns captures at any angle on request, the same captures otherwise", () => {
    const turns: number[] = [];
    for (let s = 0; s < 8; s++) {
      const sSeed = subjectSeed(13, s);
      const nose = createSubjectFor("real", sSeed);
      const bursts = burstLayout(sSeed, 8, "real");
      for (let c = 0; c < 8; c++) {
        const plan = (roll: "upright" | "any") => planCapture(nose, captureSeed(sSeed, c), captureOptionsFor({ seed: 13, difficulty: "real", roll }, bursts[c]));
        const [upright, any] = [plan("upright"), plan("any")];
        expect(any.camera!.position).toEqual(upright.camera!.position);
        expect(any.pixelsPerUnit).toBe(upright.pixelsPerUnit);
        expect(Math.abs(upright.rotation)).toBeLessThanOrEqual((REAL.rollMaxDeg + 5) * deg);
        turns.push(any.rotation / deg);
      }
    }
    // 64 captures (bursts share a roll): every quarter of the turn is reached, none beyond it.
    expect(Math.min(...turns)).toBeGreaterThanOrEqual(-185);
    expect(Math.max(...turns)).toBeLessThan(185);
    for (const [from, to] of [[-180, -90], [-90, 0], [0, 90], [90, 180]]) expect(turns.some((t) => t >= from && t < to)).toBe(true);
    expect(rollDegrees(0, "any")).toBeCloseTo(0, 5);
    expect(rollDegrees(-1, "any")).toBeCloseTo(360 * 0.158655 - 180, 2);
    expect(rollDegrees(10, "upright")).toBe(REAL.rollMaxDeg);
  });

  it("renders a tight crop byte for byte as when framing is not named", async () => {
    const tight = await renderCapture(subject, captureSeed(seed, 2), { difficulty: "real", framing: "tight" });
    const unnamed = await renderCapture(subject, captureSeed(seed, 2), { difficulty: "real" });
    expect(tight.jpeg.equals(unnamed.jpeg)).toBe(true);
  });

  it("writes a set whose manifest names the backdrop", async () => {
    const out = await mkdtemp(path.join(tmpdir(), "synth-real-"));
    try {
      await generateDataset({ out, subjects: 1, captures: 2, seed: 5, difficulty: "real", backdrop: "shared-textured" });
      expect(JSON.parse(await readFile(path.join(out, "manifest.json"), "utf8"))).toEqual({
        seed: 5,
        difficulty: "real",
        subjects: 1,
        captures: 2,
        backdrop: "shared-textured",
        generatorVersion: GENERATOR_VERSION,
      });
      const first = await readFile(path.join(out, "s00000", "c00.jpg"));
      expect((await sharp(first).metadata()).format).toBe("jpeg");
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
