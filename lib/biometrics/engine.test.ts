import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { burstLayout, captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import type { DifficultyName } from "@/lab/synth/parameters";
import {
  analyseImage as analyseInPool,
  galleryDrop,
  galleryRemovePet,
  galleryStats,
  galleryUpsertPet,
  GalleryNotLoadedError,
  identifyInGallery,
  lightTemplateOf,
  searchKeyOfTemplate,
  shutdownEngine,
} from "./index";
import { deserializeSearchKey } from "./search-key";
import { analyseImage, identifyAmong, lightRawScores, scoreImagePair, verifyPet, type ImageAnalysis } from "./operations";
import type { ExtractionOptions } from "./extract";
import { DECISION_THRESHOLD } from "./scoring";
import { descriptorSetCount, deserializeTemplate, keypointCount, serializeTemplate, TemplateFormatError, templateQualityOf, templateVersionOf } from "./template";
import { Gallery, probeLookups } from "./gallery";
import { DESCRIPTOR_SETS, MATCHED_SETS, RERANK_CANDIDATES, RERANK_KEYPOINTS, RERANK_PROMOTED, SHORTLIST_SIZE, TEMPLATE_VERSION } from "./parameters";

/** Eight captures per subject, rendered exactly as `npm run synth` would with seed 9001. */
async function captures(subjectIndex: number, difficulty: DifficultyName): Promise<Buffer[]> {
  const seed = subjectSeed(9001, subjectIndex);
  const subject = createNoseSubject(seed);
  const bursts = burstLayout(seed, 8, difficulty);
  return Promise.all(
    bursts.map(async (burst, c) => (await renderCapture(subject, captureSeed(seed, c), { difficulty, ...(burst ? { burst } : {}) })).jpeg),
  );
}

function templatesOf(analyses: ImageAnalysis[]): Uint8Array[] {
  return analyses.flatMap((a) => (a.ok && a.template ? [a.template] : []));
}

const SUBJECTS = 4;
/** Score points between a clean genuine (or impostor) session and the decision threshold. */
const MARGIN = 10;
/** Clean phone photos ("normal"): the separation every good capture must show. */
let images: Buffer[][] = [];
let analyses: ImageAnalysis[][] = [];
/** Detector crops with blur and glare ("hard"): identification must still work on them. */
let hardImages: Buffer[][] = [];
let hardAnalyses: ImageAnalysis[][] = [];

async function analyseAll(sets: Buffer[][], options: ExtractionOptions = {}): Promise<ImageAnalysis[][]> {
  const out: ImageAnalysis[][] = [];
  for (const set of sets) out.push(await Promise.all(set.map((jpeg) => analyseImage(jpeg, options))));
  return out;
}

beforeAll(async () => {
  images = await Promise.all(Array.from({ length: SUBJECTS }, (_, s) => captures(s, "normal")));
  analyses = await analyseAll(images);
  // Their probes search 1:N, which reads the outer frames; the normal set's images have only the matched ones.
  hardImages = await Promise.all(Array.from({ length: SUBJECTS }, (_, s) => captures(s, "hard")));
  hardAnalyses = await analyseAll(hardImages, { outerFrames: true });
}, 300_000);

afterAll(() => shutdownEngine());

describe("1:1 verification (3 probe vs 5 enrolled images)", () => {
  it("scores the same nose above the threshold with margin", async () => {
    for (let s = 0; s < SUBJECTS; s++) {
      const all = templatesOf(analyses[s]);
      const outcome = await verifyPet(all.slice(5), all.slice(0, 5));
      expect(outcome.score, `subject ${s}`).toBeGreaterThanOrEqual(DECISION_THRESHOLD + MARGIN);
      expect(outcome.isVerified).toBe(true);
    }
  });

  it("scores other noses below the threshold with margin", async () => {
    for (let p = 0; p < SUBJECTS; p++) {
      for (let e = 0; e < SUBJECTS; e++) {
        if (p === e) continue;
        const outcome = await verifyPet(templatesOf(analyses[p]).slice(5), templatesOf(analyses[e]).slice(0, 5));
        expect(outcome.score, `probe ${p} vs enrolled ${e}`).toBeLessThanOrEqual(DECISION_THRESHOLD - MARGIN);
        expect(outcome.isVerified).toBe(false);
      }
    }
  });

  it("reports the figures behind a score (transparency)", async () => {
    const all = templatesOf(analyses[0]);
    const { details } = await verifyPet(all.slice(5), all.slice(0, 5));
    expect(details.inliers).toHaveLength(3);
    expect(details.inliers[0]).toHaveLength(5);
    expect(Math.max(...details.inliers.flat())).toBeGreaterThan(0);
    expect(details.raw).toBeGreaterThan(0);
  });
});

describe("1:N identification on hard captures", () => {
  it("finds each probe's pet first and nobody for a stranger", async () => {
    const decoded = (s: number) => templatesOf(hardAnalyses[s]).map(deserializeTemplate);
    const gallery = [0, 1, 2].map((s) => ({ petId: `pet-${s}`, templates: decoded(s).slice(0, 5) }));
    const outcomes = await identifyAmong([0, 1, 2, 3].map((s) => decoded(s).slice(5)), gallery);
    for (const s of [0, 1, 2]) expect(outcomes[s].candidates[0]?.petId, `subject ${s}`).toBe(`pet-${s}`);
    expect(outcomes[3].candidates).toEqual([]);
  });
});

describe("descriptor frames: the outer ones only for 1:N probes", () => {
  const decoded = (sets: ImageAnalysis[][], s: number) => templatesOf(sets[s]).map(deserializeTemplate);
  let matchedOnly: ImageAnalysis[][] = [];
  beforeAll(async () => {
    matchedOnly = await analyseAll(hardImages);
  });

  it("an image extracted without them has the same keypoints, matched frames and search key, in 0.7 of the bytes", () => {
    const withOuter = decoded(hardAnalyses, 0);
    const without = decoded(matchedOnly, 0);
    expect(without.length).toBe(withOuter.length);
    expect(withOuter.map(descriptorSetCount)).toEqual(withOuter.map(() => DESCRIPTOR_SETS));
    expect(without.map(descriptorSetCount)).toEqual(without.map(() => MATCHED_SETS));
    without.forEach((template, i) => {
      const whole = withOuter[i];
      expect(template.keypoints).toEqual(whole.keypoints);
      expect(template.descriptors).toEqual(whole.descriptors.subarray(0, template.descriptors.length));
      expect(template.genericness).toEqual(whole.genericness);
      expect(template.searchKey).toEqual(whole.searchKey);
      expect(deserializeTemplate(serializeTemplate(template))).toEqual(template);
      expect(serializeTemplate(template).length).toBeLessThan(serializeTemplate(whole).length * 0.7);
    });
  });

  it("1:1 scores do not depend on them", async () => {
    const withOuter = templatesOf(hardAnalyses[0]);
    const without = templatesOf(matchedOnly[0]);
    const other = templatesOf(matchedOnly[1]);
    expect(await verifyPet(without.slice(5), without.slice(0, 5))).toEqual(await verifyPet(withOuter.slice(5), withOuter.slice(0, 5)));
    expect(await verifyPet(withOuter.slice(5), other.slice(0, 5))).toEqual(await verifyPet(without.slice(5), other.slice(0, 5)));
    expect((await verifyPet(without.slice(5), without.slice(0, 5))).score).toBeGreaterThan((await verifyPet(without.slice(5), other.slice(0, 5))).score);
  });

  it("a 1:N probe without them still finds its pet, looking up in the frames it has", async () => {
    const gallery = [0, 1, 2].map((s) => ({ petId: `pet-${s}`, templates: decoded(matchedOnly, s).slice(0, 5) }));
    const outcomes = await identifyAmong([0, 1, 2, 3].map((s) => decoded(matchedOnly, s).slice(5)), gallery);
    for (const s of [0, 1, 2]) expect(outcomes[s].candidates[0]?.petId, `subject ${s}`).toBe(`pet-${s}`);
    expect(outcomes[3].candidates).toEqual([]);
  });
});

describe("1:N cascade: the light comparison beyond the first stage's shortlist", () => {
  // Decoy pets whose search keys are the probe's own (the first stage ranks them all above the true pet) but whose
  // images are another nose's: the true pet comes 41st, beyond the SHORTLIST_SIZE that used to be compared in full,
  // and beyond what each of two worker shards would hold if a shard returned only its SHORTLIST_SIZE best.
  const DECOYS = 40;
  const probeOf = () => templatesOf(hardAnalyses[0]).slice(5);
  const decoyKeys = () => probeOf().map(searchKeyOfTemplate);
  const otherNose = () => templatesOf(hardAnalyses[1]).slice(0, 5);
  const decoyIds = Array.from({ length: DECOYS }, (_, i) => `decoy-${String(i).padStart(2, "0")}`);

  it("finds a pet that the first stage ranks beyond its shortlist (in process)", async () => {
    const probe = probeOf().map(deserializeTemplate);
    const keys = decoyKeys().map(deserializeSearchKey);
    const gallery = [
      { petId: "pet-0", templates: templatesOf(hardAnalyses[0]).slice(0, 5).map(deserializeTemplate) },
      ...decoyIds.map((petId) => ({ petId, templates: otherNose().map((t, i) => ({ ...deserializeTemplate(t), searchKey: keys[i % keys.length] })) })),
    ];
    const firstStage = new Gallery();
    for (const pet of gallery) firstStage.upsert(pet.petId, pet.templates.map((t) => t.searchKey));
    const rank = firstStage.shortlist(probe, RERANK_CANDIDATES, DESCRIPTOR_SETS).petIds.indexOf("pet-0");
    firstStage.dispose();
    expect(rank).toBe(DECOYS);
    expect(rank).toBeGreaterThanOrEqual(SHORTLIST_SIZE);

    const [outcome] = await identifyAmong([probe], gallery);
    expect(outcome.candidates.map((c) => c.petId)).toEqual(["pet-0"]);
    // Every pet is compared lightly (the fast pass's 16, then the rest); the lightly best of each pass in full.
    expect(outcome.details).toMatchObject({ shortlisted: DECOYS + 1, reranked: DECOYS + 1, compared: 2 * RERANK_PROMOTED });
  });

  it("gives each shard the same shortlists from lookups computed once for all shards as from its own", () => {
    const probe = probeOf().map(deserializeTemplate);
    const keys = decoyKeys().map(deserializeSearchKey);
    const fill = (gallery: Gallery) => {
      gallery.upsert("pet-0", templatesOf(hardAnalyses[0]).slice(0, 5).map((t) => deserializeTemplate(t).searchKey));
      decoyIds.forEach((petId, d) => gallery.upsert(petId, keys.slice(0, 1 + (d % keys.length))));
      return gallery;
    };
    const [own, given] = [fill(new Gallery()), fill(new Gallery())];
    // The fast pass, then the deep pass resuming its votes (lookups of the outer frames only).
    expect(given.shortlist(probe, SHORTLIST_SIZE, MATCHED_SETS, "s", { fromSet: 0, lookups: probeLookups(probe, MATCHED_SETS) })).toEqual(
      own.shortlist(probe, SHORTLIST_SIZE, MATCHED_SETS, "s"),
    );
    const deep = own.shortlist(probe, RERANK_CANDIDATES, DESCRIPTOR_SETS, "s");
    expect(given.shortlist(probe, RERANK_CANDIDATES, DESCRIPTOR_SETS, "s", { fromSet: MATCHED_SETS, lookups: probeLookups(probe, DESCRIPTOR_SETS, MATCHED_SETS) })).toEqual(deep);
    // A shard that holds no votes to resume ignores lookups of the outer frames only and looks every frame up.
    const fresh = fill(new Gallery());
    expect(fresh.shortlist(probe, RERANK_CANDIDATES, DESCRIPTOR_SETS, "t", { fromSet: MATCHED_SETS, lookups: probeLookups(probe, DESCRIPTOR_SETS, MATCHED_SETS) })).toEqual(deep);
    fresh.dispose();
    expect(deep.petIds).toContain("pet-0");
    for (const gallery of [own, given]) gallery.dispose();
  });

  it("does the same in a gallery held by the engine's workers", async () => {
    const enrolled = templatesOf(hardAnalyses[0]).slice(0, 5);
    await galleryUpsertPet("cascade", "pet-0", enrolled);
    const keys = decoyKeys();
    for (const petId of decoyIds) await galleryUpsertPet("cascade", petId, otherNose().map((_, i) => keys[i % keys.length]));
    const requested: string[][] = [];
    const requestedLight: string[][] = [];
    const imagesOf = (petId: string) => (petId === "pet-0" ? enrolled : otherNose());
    const outcome = await identifyInGallery(
      "cascade",
      probeOf(),
      async (petIds) => {
        requested.push(petIds);
        return petIds.map((petId) => ({ petId, templates: imagesOf(petId) }));
      },
      async (petIds) => {
        requestedLight.push(petIds);
        return petIds.map((petId) => ({ petId, templates: imagesOf(petId).map(lightTemplateOf) }));
      },
    );
    await galleryDrop("cascade");
    // The first stage's 16 best lightly, the best of them in full (their templates read at once, though matched the
    // lightly best and the first stage's best first); only when nobody among them is accepted, the others' light
    // templates, and the promoted ones' whole templates.
    expect(requestedLight.map((ids) => ids.length)).toEqual([SHORTLIST_SIZE, DECOYS + 1 - SHORTLIST_SIZE]);
    expect(requested.map((ids) => ids.length)).toEqual([RERANK_PROMOTED, RERANK_PROMOTED]);
    expect(requested[0]).not.toContain("pet-0");
    expect(requested[1]).toContain("pet-0");
    expect(outcome.candidates.map((c) => c.petId)).toEqual(["pet-0"]);
    expect(outcome.details).toMatchObject({ searched: DECOYS + 1, shortlisted: DECOYS + 1, reranked: DECOYS + 1, compared: 2 * RERANK_PROMOTED });
  });
});

describe("1:N galleries held in the engine's workers", () => {
  it("shortlist in the gallery, match the loaded shortlist in full, and follow removals", async () => {
    const enrolled = new Map([0, 1, 2].map((s) => [`pet-${s}`, templatesOf(hardAnalyses[s]).slice(0, 5)]));
    // A gallery takes whole templates or the compact search keys cut from them.
    for (const [petId, templates] of enrolled) {
      await galleryUpsertPet("account-a", petId, petId === "pet-0" ? templates.map(searchKeyOfTemplate) : templates);
    }
    await galleryUpsertPet("account-b", "pet-3", templatesOf(hardAnalyses[3]).slice(0, 5));
    const requested: string[][] = [];
    const load = async (petIds: string[]) => {
      requested.push(petIds);
      return petIds.flatMap((petId) => (enrolled.has(petId) ? [{ petId, templates: enrolled.get(petId)! }] : []));
    };
    for (const s of [0, 1, 2]) {
      const outcome = await identifyInGallery("account-a", templatesOf(hardAnalyses[s]).slice(5), load);
      expect(outcome.candidates[0]?.petId, `subject ${s}`).toBe(`pet-${s}`);
      expect(outcome.details.searched).toBe(3);
    }
    expect(requested.flat().every((petId) => enrolled.has(petId))).toBe(true);
    expect((await identifyInGallery("account-a", templatesOf(hardAnalyses[3]).slice(5), load)).candidates).toEqual([]);

    expect(await galleryStats("account-a")).toMatchObject({ loaded: true, pets: 3 });
    expect((await galleryStats("account-a")).bytes).toBeGreaterThan(0);
    expect(await galleryRemovePet("account-a", "pet-1")).toBe(true);
    const afterRemoval = await identifyInGallery("account-a", templatesOf(hardAnalyses[1]).slice(5), load);
    expect(afterRemoval.candidates.map((c) => c.petId)).not.toContain("pet-1");
    expect(afterRemoval.details.searched).toBe(2);

    await galleryDrop("account-a");
    expect(await galleryStats("account-a")).toEqual({ loaded: false, pets: 0, bytes: 0 });
    await expect(identifyInGallery("account-a", templatesOf(hardAnalyses[0]).slice(5), load)).rejects.toBeInstanceOf(GalleryNotLoadedError);
    expect(await galleryStats("account-b")).toMatchObject({ loaded: true, pets: 1 });
  });
});

describe("templates", () => {
  it("round-trip through their persisted form unchanged", () => {
    const bytes = templatesOf(analyses[0])[0];
    const template = deserializeTemplate(bytes);
    expect(template.version).toBe(TEMPLATE_VERSION);
    expect(Buffer.from(serializeTemplate(template)).equals(Buffer.from(bytes))).toBe(true);
    expect(deserializeSearchKey(searchKeyOfTemplate(bytes))).toEqual(template.searchKey);
    expect(searchKeyOfTemplate(bytes).length).toBeLessThan(bytes.length / 10);
  });

  it("cut to a light template that the light comparison scores as it scores the whole template", () => {
    const probe = templatesOf(hardAnalyses[0]).slice(5).map(deserializeTemplate);
    const whole = [0, 1].map((s) => templatesOf(hardAnalyses[s]).slice(0, 5));
    const light = whole.map((templates) => templates.map(lightTemplateOf));
    const decoded = light[0].map(deserializeTemplate);
    expect(decoded.every((t) => keypointCount(t) === RERANK_KEYPOINTS && t.searchKey.words.length === 0)).toBe(true);
    light.flat().forEach((bytes, i) => expect(bytes.length).toBeLessThan(whole.flat()[i].length / 2.5));
    const scores = (sets: Uint8Array[][]) => lightRawScores(probe, sets.map((templates, s) => ({ petId: `pet-${s}`, templates: templates.map(deserializeTemplate) })));
    expect(scores(light)).toEqual(scores(whole));
    // The genuine pet scores above the other nose, so the comparison is not trivially equal.
    const [genuine, impostor] = scores(light);
    expect(genuine.raw).toBeGreaterThan(impostor.raw);
  });

  it("tell their quality from the header, as decoding them does", () => {
    const qualities = analyses.flatMap((analysis) => templatesOf(analysis)).map((bytes) => [templateQualityOf(bytes), deserializeTemplate(bytes).quality]);
    qualities.forEach(([header, decoded]) => expect(header).toBe(decoded));
    expect(new Set(qualities.map(([q]) => q)).size).toBeGreaterThan(1);
    expect(() => templateQualityOf(new Uint8Array(8))).toThrow(TemplateFormatError);
  });

  it("refuse another engine version and damaged bytes instead of misreading them", () => {
    const bytes = Uint8Array.from(templatesOf(analyses[0])[0]);
    const older = Uint8Array.from(bytes);
    new DataView(older.buffer).setUint16(4, TEMPLATE_VERSION + 1, true);
    expect(templateVersionOf(older)).toBe(TEMPLATE_VERSION + 1);
    expect(() => deserializeTemplate(older)).toThrow(TemplateFormatError);
    const fourFrames = Uint8Array.from(bytes);
    fourFrames[15] = 4;
    expect(() => deserializeTemplate(fourFrames)).toThrow(/descriptor sets 4/);
    expect(() => searchKeyOfTemplate(fourFrames)).toThrow(TemplateFormatError);
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
  it("marks an image blurred until no nose texture is left unusable and says why", async () => {
    const blurred = await sharp(images[0][0]).blur(14).jpeg().toBuffer();
    const sharpAnalysis = await analyseImage(images[0][0]);
    const blurredAnalysis = await analyseImage(blurred);
    if (!sharpAnalysis.ok || !blurredAnalysis.ok) throw new Error("both decode");
    expect(blurredAnalysis.quality.score).toBeLessThan(sharpAnalysis.quality.score);
    expect(blurredAnalysis.quality.usable).toBe(false);
    expect(blurredAnalysis.template).toBeNull();
    expect(blurredAnalysis.quality.reasons).toContain("out of focus or motion-blurred");
  });

  it("keeps a refused image's template only when asked (single image pairs), still reporting it unusable", async () => {
    const soft = await sharp(images[0][0]).blur(14).jpeg().toBuffer();
    const described = await analyseImage(soft, { describeUnusable: true });
    if (!described.ok) throw new Error("decodes");
    expect(described.quality.usable).toBe(false);
    expect(described.template).not.toBeNull();
    // What it holds is its nose's evidence: it scores its own sharp capture above another nose.
    const own = await analyseImage(images[0][1]);
    const other = await analyseImage(images[1][0]);
    if (!own.ok || !own.template || !other.ok || !other.template) throw new Error("usable");
    expect(await scoreImagePair(described.template!, own.template)).toBeGreaterThanOrEqual(await scoreImagePair(described.template!, other.template));
    expect(await scoreImagePair(described.template!, other.template)).toBeLessThan(DECISION_THRESHOLD);
  });

  it("rejects what is not a nose photo at all with a typed reason", async () => {
    const result = await analyseImage(Buffer.from("definitely not a jpeg"));
    expect(result).toEqual({ ok: false, rejection: { code: "NOT_JPEG", message: expect.any(String) } });
  });
});
