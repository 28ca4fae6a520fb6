import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { burstLayout, captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import { extractNoseImage } from "./extract";
import { compareTemplates } from "./pair-matcher";
import { analyseImage, compareImagePair, identifyAmong, rankCandidates, scoreImagePair, turnProbeImage, verifyPet } from "./operations";
import { galleryDrop, galleryUpsertPet, identifyInGallery, rankOverPool, shutdownEngine } from "./index";
import { DECISION_THRESHOLD } from "./scoring";
import { deserializeTemplate, keypointCount, splitTemplates, TemplateFormatError, type NoseTemplate } from "./template";
import { QUARTER_TURNS, quarterTurnViews, TurnableImage, turnableFromViews } from "./turns";

/** Eight captures of a normal-setting subject, as `npm run synth -- --seed 9001` renders them. */
async function captures(subjectIndex: number): Promise<Buffer[]> {
  const seed = subjectSeed(9001, subjectIndex);
  const subject = createNoseSubject(seed);
  const bursts = burstLayout(seed, 8, "normal");
  return Promise.all(bursts.map(async (burst, c) => (await renderCapture(subject, captureSeed(seed, c), { difficulty: "normal", ...(burst ? { burst } : {}) })).jpeg));
}

async function templateOf(jpeg: Uint8Array): Promise<NoseTemplate> {
  const result = await extractNoseImage(jpeg);
  if (!result.ok || !result.template) throw new Error("unusable test image");
  return result.template;
}

async function serialised(jpegs: Uint8Array[]): Promise<Uint8Array[]> {
  return Promise.all(
    jpegs.map(async (jpeg) => {
      const analysis = await analyseImage(jpeg);
      if (!analysis.ok || !analysis.template) throw new Error("unusable test image");
      return analysis.template;
    }),
  );
}

/** Turned clockwise by `degrees` (a quarter-turn multiple) and encoded again, nearly losslessly. */
const rotated = (jpeg: Uint8Array, degrees: number) => sharp(jpeg).rotate(degrees).jpeg({ quality: 100 }).toBuffer();

let own: Buffer[];
let other: Buffer[];
let third: Buffer[];

beforeAll(async () => {
  [own, other, third] = await Promise.all([captures(0), captures(1), captures(2)]);
}, 120_000);

afterAll(() => shutdownEngine());

describe("quarter-turned views of a template", () => {
  it("are the template of the image turned: the same keypoints, aligned with no rotation left", async () => {
    const template = await templateOf(own[0]);
    const turnable = (await TurnableImage.of(own[0], template))!;
    for (const clockwise of [90, 180, 270]) {
      const actual = await templateOf(await rotated(own[0], clockwise));
      const comparisons = QUARTER_TURNS.map((turn) => ({ turn, ...compareTemplates(turnable.view(turn), actual) }));
      const best = comparisons.reduce((a, b) => (b.inliers > a.inliers ? b : a));
      // A clockwise turn of the image is the view turned the other way.
      expect(best.turn, `clockwise ${clockwise}`).toBe(360 - clockwise);
      expect(best.rotationDeg).toBe(0);
      expect(best.inliers).toBeGreaterThan(0.6 * keypointCount(template));
      for (const c of comparisons) if (c !== best) expect(c.inliers).toBeLessThan(best.inliers / 5);
    }
  });

  it("cuts a view to the strongest keypoints on request, and refuses bytes of another size", async () => {
    const template = await templateOf(own[0]);
    const turnable = (await TurnableImage.of(own[0], template))!;
    expect(keypointCount(turnable.view(90, 60))).toBe(60);
    expect(keypointCount(turnable.view(90))).toBe(keypointCount(template));
    expect(await TurnableImage.of(await sharp(own[0]).resize(200).jpeg().toBuffer(), template)).toBeNull();
    expect(await TurnableImage.of(new Uint8Array(0), template)).toBeNull();
  });

  it("are made at extraction, when asked, byte for byte as from the JPEG later, and split back from their joined bytes", async () => {
    const analysis = await analyseImage(own[5], { outerFrames: true, turnedViews: true });
    if (!analysis.ok || !analysis.template || !analysis.turnedViews) throw new Error("no views made");
    const fromJpeg = await turnProbeImage(analysis.template, own[5]);
    expect(fromJpeg).toHaveLength(QUARTER_TURNS.length);
    expect(splitTemplates(analysis.turnedViews)).toEqual(fromJpeg);
    const plain = await analyseImage(own[5], { outerFrames: true });
    expect(plain.ok && plain.turnedViews).toBeNull();
    expect(plain.ok && plain.template).toEqual(analysis.template);
    expect(() => splitTemplates(analysis.turnedViews!.subarray(0, analysis.turnedViews!.byteLength - 1))).toThrow(TemplateFormatError);
    expect(() => splitTemplates(new Uint8Array(40))).toThrow(TemplateFormatError);
  });
});

describe("1:1 verification of a nose photographed turned by a quarter turn", () => {
  it("accepts the same nose from its probe images' JPEGs, not without them, and still refuses another nose", async () => {
    const enrolled = await serialised(own.slice(0, 5));
    const turnedOwn = await Promise.all(own.slice(5).map((jpeg) => rotated(jpeg, 90)));
    const turnedOther = await Promise.all(other.slice(5).map((jpeg) => rotated(jpeg, 90)));
    const probe = await serialised(turnedOwn);
    const stranger = await serialised(turnedOther);

    const upright = await verifyPet(probe, enrolled);
    const turned = await verifyPet(probe, enrolled, turnedOwn);
    expect(upright.isVerified).toBe(false);
    expect(turned.isVerified).toBe(true);
    expect(turned.score).toBeGreaterThanOrEqual(DECISION_THRESHOLD + 10);

    const impostor = await verifyPet(stranger, enrolled, turnedOther);
    expect(impostor.score).toBeLessThan(DECISION_THRESHOLD - 10);
    // A probe image whose bytes cannot be read is compared upright only, never an error.
    const unreadable = await verifyPet(probe, enrolled, [new Uint8Array(0), turnedOwn[1], turnedOwn[2]]);
    expect(unreadable.details.similarity[0]).toEqual(upright.details.similarity[0]);
  });
});

describe("a single image pair of a nose photographed turned by a quarter turn", () => {
  it("is matched at the first image's quarter turns from its JPEG, not without it, and another nose stays refused", async () => {
    const turnedOwn = await rotated(own[5], 270);
    const turnedOther = await rotated(other[5], 270);
    const [probe, stranger, enrolled] = await serialised([turnedOwn, turnedOther, own[0]]);
    const upright = await scoreImagePair(probe, enrolled);
    const turned = await scoreImagePair(probe, enrolled, turnedOwn);
    expect(upright).toBeLessThan(DECISION_THRESHOLD);
    expect(turned).toBeGreaterThanOrEqual(DECISION_THRESHOLD + 10);
    expect(await scoreImagePair(stranger, enrolled, turnedOther)).toBeLessThan(DECISION_THRESHOLD - 10);
    // Bytes that are not the first image's own are no views at all: the pair is scored upright.
    expect(await scoreImagePair(probe, enrolled, own[1])).toBe(upright);
  });

  it("asks for no views when the upright comparison accepts the pair", async () => {
    const [a, b] = (await serialised([own[0], own[1]])).map(deserializeTemplate);
    let asked = 0;
    const comparison = await compareImagePair(a, b, async () => {
      asked++;
      return null;
    });
    expect(comparison.similarity).toBe(comparison.upright);
    expect(asked).toBe(0);
  });
});

describe("1:N of a nose photographed turned by a quarter", () => {
  it("finds the pet in a third pass on the probe's turned views, and an unknown animal turned matches nobody", async () => {
    const pets = [
      { petId: "own", templates: (await serialised(own.slice(0, 5))).map(deserializeTemplate) },
      { petId: "third", templates: (await serialised(third.slice(0, 5))).map(deserializeTemplate) },
    ];
    const turnedOwn = await Promise.all(own.slice(5).map((jpeg) => rotated(jpeg, 180)));
    const turnedOther = await Promise.all(other.slice(5).map((jpeg) => rotated(jpeg, 180)));
    const probe = (await serialised(turnedOwn)).map(deserializeTemplate);
    const stranger = (await serialised(turnedOther)).map(deserializeTemplate);
    const views = async (jpegs: Uint8Array[], templates: NoseTemplate[]) => Promise.all(templates.map((t, p) => quarterTurnViews(jpegs[p], t)));

    const [upright] = await identifyAmong([probe], pets);
    expect(upright.candidates).toEqual([]);
    const turned = [await views(turnedOwn, probe), await views(turnedOther, stranger)];
    const [found, unknown] = await identifyAmong([probe, stranger], pets, async (n) => turned[n]);
    expect(found.candidates[0]?.petId).toBe("own");
    expect(found.candidates[0]!.score).toBeGreaterThanOrEqual(DECISION_THRESHOLD);
    expect(found.details.compared).toBeGreaterThan(upright.details.compared);
    expect(unknown.candidates).toEqual([]);
  });

  it("scores pets as one thread does when their full matching is spread over the engine's workers image by image", async () => {
    const pets = [
      { petId: "own", templates: await serialised(own.slice(0, 5)) },
      { petId: "other", templates: await serialised(other.slice(0, 5)) },
      { petId: "third", templates: await serialised(third.slice(0, 5)) },
    ];
    const decoded = pets.map((pet) => ({ petId: pet.petId, templates: pet.templates.map(deserializeTemplate) }));
    const turnedOwn = await Promise.all(own.slice(5).map((jpeg) => rotated(jpeg, 90)));
    const probe = await serialised(turnedOwn);
    const views = await Promise.all(probe.map((template, p) => turnProbeImage(template, turnedOwn[p])));
    const turnable = views.map((v) => turnableFromViews(v.map(deserializeTemplate)));
    // Upright, the turned nose matches nobody; turned, its own pet only (one pet, as a cascade step may match, and three).
    const upright = await rankOverPool(probe, pets);
    expect(upright).toEqual(rankCandidates(probe.map(deserializeTemplate), decoded));
    expect(upright.candidates).toEqual([]);
    const turned = await rankOverPool(probe, pets, views);
    expect(turned).toEqual(rankCandidates(probe.map(deserializeTemplate), decoded, turnable));
    expect(turned.candidates.map((c) => c.petId)).toEqual(["own"]);
    expect(turned.bestRaw).toBeGreaterThan(upright.bestRaw);
    expect(await rankOverPool(probe, pets.slice(0, 1), views)).toEqual(rankCandidates(probe.map(deserializeTemplate), decoded.slice(0, 1), turnable));
    // A probe image without views keeps its upright row.
    const partly = [views[0], [], views[2]];
    expect(await rankOverPool(probe, pets, partly)).toEqual(rankCandidates(probe.map(deserializeTemplate), decoded, [turnable[0], null, turnable[2]]));
  });

  it("does the same in a gallery held by the engine's workers, from the probe images' JPEGs or the views their upload made", async () => {
    const key = "turns-test";
    const enrolled = { own: await serialised(own.slice(0, 5)), third: await serialised(third.slice(0, 5)) };
    for (const [petId, templates] of Object.entries(enrolled)) await galleryUpsertPet(key, petId, templates);
    const load = async (petIds: string[]) => petIds.map((petId) => ({ petId, templates: enrolled[petId as keyof typeof enrolled] }));
    const turnedOwn = await Promise.all(own.slice(5).map((jpeg) => rotated(jpeg, 90)));
    const probe = await serialised(turnedOwn);
    try {
      expect((await identifyInGallery(key, probe, load)).candidates).toEqual([]);
      const outcome = await identifyInGallery(key, probe, load, load, turnedOwn.map((jpeg) => ({ jpeg })));
      expect(outcome.candidates.map((c) => c.petId)).toEqual(["own"]);
      // The views an upload made (decision 0042): the same search, no JPEG read.
      const uploaded = await Promise.all(turnedOwn.map((jpeg) => analyseImage(jpeg, { turnedViews: true })));
      const views = uploaded.map((analysis) => ({ views: analysis.ok ? analysis.turnedViews : null }));
      expect(await identifyInGallery(key, probe, load, load, views)).toEqual(outcome);
      // Stored views that do not split into whole templates of this engine are not read: the JPEG is turned instead,
      // and without one the image is searched upright only.
      const damaged = views.map(({ views: v }, p) => ({ views: v!.subarray(0, 100), jpeg: turnedOwn[p] }));
      expect(await identifyInGallery(key, probe, load, load, damaged)).toEqual(outcome);
      expect((await identifyInGallery(key, probe, load, load, damaged.map(({ views: v }) => ({ views: v })))).candidates).toEqual([]);
    } finally {
      await galleryDrop(key);
    }
  });
});
