import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderCapture } from "../synth/capture";
import { burstLayout, captureSeed, subjectSeed } from "../synth/dataset";
import { createNoseSubject } from "../synth/nose-surface";
import { analyseImage as analyseInPool, shutdownEngine } from "./index";
import { analyseImage, identifyPet, verifyPet, type ImageAnalysis } from "./operations";
import { DECISION_THRESHOLD } from "./scoring";
import { deserializeTemplate, serializeTemplate, TemplateFormatError, templateVersionOf } from "./template";
import { TEMPLATE_VERSION } from "./parameters";

/** Eight hard-setting captures per subject, rendered exactly as `npm run synth` would (seed 9001). */
async function captures(subjectIndex: number): Promise<Buffer[]> {
  const seed = subjectSeed(9001, subjectIndex);
  const subject = createNoseSubject(seed);
  const bursts = burstLayout(seed, 8, "hard");
  return Promise.all(
    bursts.map(async (burst, c) => (await renderCapture(subject, captureSeed(seed, c), { difficulty: "hard", ...(burst ? { burst } : {}) })).jpeg),
  );
}

function templatesOf(analyses: ImageAnalysis[]): Uint8Array[] {
  return analyses.flatMap((a) => (a.ok && a.template ? [a.template] : []));
}

const SUBJECTS = 4;
const MARGIN = 10;
let images: Buffer[][] = [];
let analyses: ImageAnalysis[][] = [];

beforeAll(async () => {
  images = await Promise.all(Array.from({ length: SUBJECTS }, (_, s) => captures(s)));
  analyses = [];
  for (const subject of images) analyses.push(await Promise.all(subject.map(analyseImage)));
}, 120_000);

afterAll(() => shutdownEngine());

describe("1:1 verification (3 probe vs 5 enrolled images)", () => {
  it("scores the same nose above the threshold with margin", () => {
    for (let s = 0; s < SUBJECTS; s++) {
      const all = templatesOf(analyses[s]);
      const outcome = verifyPet(all.slice(5), all.slice(0, 5));
      expect(outcome.score, `subject ${s}`).toBeGreaterThanOrEqual(DECISION_THRESHOLD + MARGIN);
      expect(outcome.isVerified).toBe(true);
    }
  });

  it("scores other noses below the threshold with margin", () => {
    for (let p = 0; p < SUBJECTS; p++) {
      for (let e = 0; e < SUBJECTS; e++) {
        if (p === e) continue;
        const outcome = verifyPet(templatesOf(analyses[p]).slice(5), templatesOf(analyses[e]).slice(0, 5));
        expect(outcome.score, `probe ${p} vs enrolled ${e}`).toBeLessThanOrEqual(DECISION_THRESHOLD - MARGIN);
        expect(outcome.isVerified).toBe(false);
      }
    }
  });

  it("reports the figures behind a score (transparency)", () => {
    const all = templatesOf(analyses[0]);
    const { details } = verifyPet(all.slice(5), all.slice(0, 5));
    expect(details.inliers).toHaveLength(3);
    expect(details.inliers[0]).toHaveLength(5);
    expect(Math.max(...details.inliers.flat())).toBeGreaterThan(0);
    expect(details.raw).toBeGreaterThan(0);
  });
});

describe("1:N identification", () => {
  it("finds the probe's pet first and nobody for a stranger", () => {
    const gallery = [0, 1, 2].map((s) => ({ petId: `pet-${s}`, templates: templatesOf(analyses[s]).slice(0, 5) }));
    const found = identifyPet(templatesOf(analyses[1]).slice(5), gallery);
    expect(found.candidates[0]?.petId).toBe("pet-1");
    const stranger = identifyPet(templatesOf(analyses[3]).slice(5), gallery);
    expect(stranger.candidates).toEqual([]);
  });
});

describe("templates", () => {
  it("round-trip through their persisted form unchanged", () => {
    const bytes = templatesOf(analyses[0])[0];
    const template = deserializeTemplate(bytes);
    expect(template.version).toBe(TEMPLATE_VERSION);
    expect(Buffer.from(serializeTemplate(template)).equals(Buffer.from(bytes))).toBe(true);
  });

  it("refuse another engine version and damaged bytes instead of misreading them", () => {
    const bytes = Uint8Array.from(templatesOf(analyses[0])[0]);
    const older = Uint8Array.from(bytes);
    new DataView(older.buffer).setUint16(4, TEMPLATE_VERSION + 1, true);
    expect(templateVersionOf(older)).toBe(TEMPLATE_VERSION + 1);
    expect(() => deserializeTemplate(older)).toThrow(TemplateFormatError);
    expect(() => deserializeTemplate(bytes.subarray(0, bytes.length - 1))).toThrow(TemplateFormatError);
    expect(() => deserializeTemplate(new Uint8Array(8))).toThrow(TemplateFormatError);
  });

  it("are deterministic, and the worker pool gives the in-process result", async () => {
    const jpeg = images[2][0];
    const [a, b, pooled] = [await analyseImage(jpeg), await analyseImage(jpeg), await analyseInPool(jpeg)];
    if (!a.ok || !b.ok || !pooled.ok) throw new Error("expected a usable image");
    expect(Buffer.from(a.template!).equals(Buffer.from(b.template!))).toBe(true);
    expect(Buffer.from(pooled.template!).equals(Buffer.from(a.template!))).toBe(true);
  });
});

describe("quality", () => {
  it("marks a heavily blurred image unusable and says why", async () => {
    const blurred = await sharp(images[0][0]).blur(6).jpeg().toBuffer();
    const sharpAnalysis = await analyseImage(images[0][0]);
    const blurredAnalysis = await analyseImage(blurred);
    if (!sharpAnalysis.ok || !blurredAnalysis.ok) throw new Error("both decode");
    expect(blurredAnalysis.quality.score).toBeLessThan(sharpAnalysis.quality.score);
    expect(blurredAnalysis.quality.usable).toBe(false);
    expect(blurredAnalysis.template).toBeNull();
    expect(blurredAnalysis.quality.reasons).toContain("out of focus or motion-blurred");
  });

  it("rejects what is not a nose photo at all with a typed reason", async () => {
    const result = await analyseImage(Buffer.from("definitely not a jpeg"));
    expect(result).toEqual({ ok: false, rejection: { code: "NOT_JPEG", message: expect.any(String) } });
  });
});
