import { afterEach, describe, expect, it } from "vitest";
import { prng } from "@/lab/test-support/nose-images";
import { InvertedIndex } from "./inverted-index";
import { kernelHeap, kernelViews } from "./simd/posting-kernel";
import { ENGINE_KERNEL, ENGINE_KERNELS, useEngineKernel } from "./simd/native-kernels";
import { ANGLE_BINS, HAMMING_SIGMA, HAMMING_THRESHOLD, INDEXED_POSTINGS, QUERY_WORDS, VOCABULARY_WORDS } from "./parameters";
import { deserializeSearchKey, isSearchKey, serializeSearchKey, type ProbeLookups, type SearchKey } from "./search-key";
import { packPets, type PackedPets } from "./packed-pets";
import { FileSink, FileSource, SnapshotChangedError, SnapshotCorruptError } from "./snapshot-stream";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// Synthetic keys: each "pet" has its own words and signatures, so the index's bookkeeping (votes,
// removal, compaction, renumbering) is tested apart from image features.

function randomKey(seed: number, count = 60): SearchKey {
  const rand = prng(seed);
  const words = Uint16Array.from({ length: count }, () => Math.floor(rand() * VOCABULARY_WORDS));
  const signatures = Uint32Array.from({ length: count * 2 }, () => Math.floor(rand() * 0x1_0000_0000));
  const angles = Uint8Array.from({ length: count }, () => Math.floor(rand() * 256));
  return { words, signatures, angles };
}

/** A probe seeing `key` again, rotated by `turn` steps, with `flips` signature bits changed per keypoint. */
function probeOf(key: SearchKey, turn = 0, flips = 2): ProbeLookups {
  const keypoints = key.words.length;
  const count = keypoints * QUERY_WORDS;
  const keypoint = new Uint32Array(count);
  const words = new Uint16Array(count);
  const signatures = new Uint32Array(count * 2);
  const angles = new Uint8Array(count);
  for (let i = 0; i < keypoints; i++) {
    for (let w = 0; w < QUERY_WORDS; w++) {
      const at = i * QUERY_WORDS + w;
      keypoint[at] = i;
      // The true word first, then other words (multiple assignment).
      words[at] = w === 0 ? key.words[i] : (key.words[i] + 17 * w) % VOCABULARY_WORDS;
      signatures[at * 2] = (key.signatures[i * 2] ^ ((1 << flips) - 1)) >>> 0;
      signatures[at * 2 + 1] = key.signatures[i * 2 + 1];
      angles[at] = (key.angles[i] + turn) & 255;
    }
  }
  return { count, keypoint, words, signatures, angles, weights: new Float32Array(count).fill(1) };
}

/** Two lookups of one probe image, one after the other (the second's keypoints numbered after the first's). */
function joinLookups(a: ProbeLookups, b: ProbeLookups): ProbeLookups {
  const offset = a.count > 0 ? a.keypoint[a.count - 1] + 1 : 0;
  const join = <T extends Uint32Array | Uint16Array | Uint8Array | Float32Array>(x: T, y: T, make: (n: number) => T) => {
    const out = make(x.length + y.length);
    out.set(x);
    out.set(y, x.length);
    return out;
  };
  return {
    count: a.count + b.count,
    keypoint: join(a.keypoint, b.keypoint.map((k) => k + offset), (n) => new Uint32Array(n)),
    words: join(a.words, b.words, (n) => new Uint16Array(n)),
    signatures: join(a.signatures, b.signatures, (n) => new Uint32Array(n)),
    angles: join(a.angles, b.angles, (n) => new Uint8Array(n)),
    weights: join(a.weights, b.weights, (n) => new Float32Array(n)),
  };
}

/** Pets with their keys, packed as a gallery load reads them. */
function packed(pets: readonly { petId: string; keys: readonly SearchKey[] }[]): PackedPets {
  return packPets(pets.map((pet) => ({ petId: pet.petId, templates: pet.keys.map((key) => serializeSearchKey(key)) })));
}

/** Set bits of a 32-bit value. */
function bits(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v &= v - 1) n++;
  return n;
}

/**
 * The first stage's scores by their definition, in plain JavaScript (search's documentation): an image row takes at most
 * one vote per probe keypoint, its first in lookup and list order; each vote adds, in f32, idf² × the lookup's weight ×
 * the Hamming weight to the row's bin of the orientation change; a row scores its best pair of adjacent bins; a pet its
 * two best rows per probe image, a session its two best probe images. Rows are numbered as added, no pet removed.
 */
function referenceScores(pets: readonly (readonly SearchKey[])[], probe: readonly ProbeLookups[]): Map<string, number> {
  const lists = new Map<number, { row: number; low: number; high: number; angle: number }[]>();
  const rowPet: number[] = [];
  pets.forEach((images, pet) =>
    images.forEach((key) => {
      const row = rowPet.push(pet) - 1;
      key.words.forEach((word, i) => {
        if (!lists.has(word)) lists.set(word, []);
        lists.get(word)!.push({ row, low: key.signatures[2 * i], high: key.signatures[2 * i + 1], angle: key.angles[i] });
      });
    }),
  );
  const total = [...lists.values()].reduce((n, list) => n + list.length, 0) + 1;
  const hamming = (d: number) => (d <= HAMMING_THRESHOLD ? Math.fround(Math.exp(-(d * d) / (HAMMING_SIGMA * HAMMING_SIGMA))) : 0);
  const imageScores = pets.map(() => [] as number[]);
  for (const lookups of probe) {
    const histograms = new Map<number, number[]>();
    let voted = new Set<number>();
    for (let k = 0; k < lookups.count; k++) {
      if (k === 0 || lookups.keypoint[k] !== lookups.keypoint[k - 1]) voted = new Set();
      const list = lists.get(lookups.words[k]) ?? [];
      const weight = Math.fround(Math.log(total / (list.length + 1)) ** 2) * lookups.weights[k];
      for (const posting of list) {
        const d = bits(posting.low ^ lookups.signatures[2 * k]) + bits(posting.high ^ lookups.signatures[2 * k + 1]);
        if (d > HAMMING_THRESHOLD || voted.has(posting.row)) continue;
        voted.add(posting.row);
        if (!histograms.has(posting.row)) histograms.set(posting.row, new Array<number>(ANGLE_BINS).fill(0));
        const bin = ((lookups.angles[k] - posting.angle) & 255) >> (8 - Math.log2(ANGLE_BINS));
        const histogram = histograms.get(posting.row)!;
        histogram[bin] = Math.fround(histogram[bin] + weight * hamming(d));
      }
    }
    const rowScores = pets.map(() => [] as number[]);
    for (const [row, h] of histograms) rowScores[rowPet[row]].push(Math.max(0, ...h.map((v, b) => v + h[(b + 1) % ANGLE_BINS])));
    rowScores.forEach((scores, pet) => {
      const [best = 0, second = 0] = scores.sort((a, b) => b - a);
      if (best > 0) imageScores[pet].push((best + second) / Math.min(2, pets[pet].length));
    });
  }
  const sessions = new Map<string, number>();
  imageScores.forEach((scores, pet) => {
    const [best = 0, second = 0] = scores.sort((a, b) => b - a);
    if (best > 0) sessions.set(`pet-${pet}`, (best + second) / Math.min(2, probe.length));
  });
  return sessions;
}

describe("inverted index", () => {
  afterEach(() => useEngineKernel(ENGINE_KERNEL));

  it("builds by batches (upsertMany) the index one-by-one upserts build, replacements and removals included", () => {
    const one = new InvertedIndex();
    const many = new InvertedIndex();
    const keys = (p: number, v = 0) => [randomKey(p * 10 + 1 + v, 120), randomKey(p * 10 + 2 + v, 120), randomKey(p * 10 + 3 + v, 120)];
    const batch = Array.from({ length: 300 }, (_, p) => ({ petId: `pet-${p}`, keys: keys(p) }));
    for (const pet of batch) one.upsert(pet.petId, pet.keys);
    many.upsertMany(packed(batch.slice(0, 150)));
    many.upsertMany(packed(batch.slice(150)));
    // Replacements and removals (no images), in one batch.
    const changes = [
      { petId: "pet-3", keys: keys(3, 5) },
      { petId: "pet-7", keys: keys(7, 6) },
      { petId: "pet-9", keys: [] },
      { petId: "pet-new", keys: keys(900) },
    ];
    for (const pet of changes) one.upsert(pet.petId, pet.keys);
    many.upsertMany(packed(changes));
    expect(many.size).toBe(one.size);
    expect(many.has("pet-9")).toBe(false);
    for (const probe of [keys(3, 5)[1], keys(7, 6)[0], keys(9)[0], keys(900)[2], keys(120)[0], keys(299)[1]]) {
      expect(many.search([probeOf(probe, 30)], 10)).toEqual(one.search([probeOf(probe, 30)], 10));
    }
    // A pet listed twice in one batch keeps its last images.
    many.upsertMany(packed([{ petId: "pet-11", keys: keys(11, 5) }, { petId: "pet-11", keys: keys(11, 6) }]));
    expect(many.search([probeOf(keys(11, 6)[0], 30)], 1)[0].petId).toBe("pet-11");
    expect(many.search([probeOf(keys(11, 5)[0], 30)], 1)[0]?.petId).not.toBe("pet-11");
    one.dispose();
    many.dispose();
  });

  it("ranks the pet whose images the probe sees first, whatever the rotation", () => {
    const index = new InvertedIndex();
    for (let p = 0; p < 50; p++) index.upsert(`pet-${p}`, [randomKey(p * 10 + 1), randomKey(p * 10 + 2)]);
    for (const p of [0, 17, 49]) {
      const top = index.search([probeOf(randomKey(p * 10 + 2), 40)], 5);
      expect(top[0].petId).toBe(`pet-${p}`);
      expect(top[0].score).toBeGreaterThan(2 * (top[1]?.score ?? 0));
    }
  });

  it("weighs each lookup's votes by its keypoint's weight", () => {
    const index = new InvertedIndex();
    const key = randomKey(6);
    index.upsert("pet", [key]);
    const full = index.search([probeOf(key, 64)], 1)[0].score;
    const halved = probeOf(key, 64);
    halved.weights.fill(0.5);
    expect(index.search([halved], 1)[0].score).toBeCloseTo(full / 2, 4);
    // A lookup of weight 0 (a keypoint every nose has) gives no vote at all.
    const silent = probeOf(key, 64);
    silent.weights.fill(0);
    expect(index.search([silent], 1)[0]?.score ?? 0).toBe(0);
  });

  it("counts only votes whose orientation changes agree", () => {
    const index = new InvertedIndex();
    const key = randomKey(5);
    index.upsert("pet", [key]);
    const consistent = index.search([probeOf(key, 64)], 1)[0].score;
    // The same matches with orientation changes scattered over every bin.
    const scattered = probeOf(key, 0);
    scattered.angles.forEach((a, i) => (scattered.angles[i] = (a + scattered.keypoint[i] * (256 / ANGLE_BINS)) & 255));
    expect(index.search([scattered], 1)[0].score).toBeLessThan(consistent / 4);
  });

  it("scores a pet, per probe image, by its two best images: one lookalike image does not outrank a pet whose captures agree", () => {
    const index = new InvertedIndex();
    const seen = randomKey(700);
    // The true pet: two captures that each hold 40 of the probe image's 60 keypoints.
    const capture = (seed: number) => {
      const key = randomKey(seed);
      for (let i = 0; i < 40; i++) {
        key.words[i] = seen.words[i];
        key.signatures.set(seen.signatures.subarray(i * 2, i * 2 + 2), i * 2);
        key.angles[i] = seen.angles[i];
      }
      return key;
    };
    index.upsert("true-pet", [capture(701), capture(702)]);
    // A pet mixed from one image that repeats all 60 keypoints (a lookalike) and an unrelated one.
    index.upsert("lookalike", [seen, randomKey(703)]);
    for (let p = 0; p < 20; p++) index.upsert(`pet-${p}`, [randomKey(800 + p), randomKey(900 + p)]);
    const top = index.search([probeOf(seen)], 2);
    // Its best image alone (60 votes against 40) would put the lookalike first.
    expect(top.map((hit) => hit.petId)).toEqual(["true-pet", "lookalike"]);
  });

  it("skips stop words: a word far more frequent than the rest gives no votes, the others still find the pet", () => {
    const index = new InvertedIndex();
    const common = 4321;
    const keys = Array.from({ length: 40 }, (_, p) => {
      const key = randomKey(p + 300);
      key.words.fill(common, 0, 30); // 40 pets x 30 = 1,200 postings: above the floor and far above the mean
      return key;
    });
    keys.forEach((key, p) => index.upsert(`pet-${p}`, [key]));
    const probe = probeOf(keys[7]);
    const commonOnly: ProbeLookups = { ...probe, words: probe.words.map((w) => (w === common ? w : (w + 1) % VOCABULARY_WORDS)) };
    expect(index.search([commonOnly], 3).filter((hit) => hit.score > 0)).toEqual([]);
    expect(index.search([probe], 1)[0].petId).toBe("pet-7");
  });

  it("forgets removed and replaced pets, also after compaction renumbers the rest", () => {
    const index = new InvertedIndex();
    for (let p = 0; p < 40; p++) index.upsert(`pet-${p}`, [randomKey(p + 100)]);
    for (let p = 0; p < 30; p++) expect(index.remove(`pet-${p}`)).toBe(true); // crosses the compaction point
    expect(index.remove("pet-0")).toBe(false);
    expect(index.size).toBe(10);
    expect(index.search([probeOf(randomKey(105))], 3).map((s) => s.petId)).not.toContain("pet-5");
    for (let p = 30; p < 40; p++) expect(index.search([probeOf(randomKey(p + 100))], 1)[0].petId).toBe(`pet-${p}`);
    // Replacing a pet's images: the old ones no longer vote for it.
    index.upsert("pet-35", [randomKey(9999)]);
    expect(index.size).toBe(10);
    expect(index.search([probeOf(randomKey(135))], 3).map((s) => s.petId)).not.toContain("pet-35");
    expect(index.search([probeOf(randomKey(9999))], 1)[0].petId).toBe("pet-35");
  });

  it("adds a later pass's lookups to the votes it kept: the scores of one search by all of them, bit for bit", () => {
    const index = new InvertedIndex();
    for (let p = 0; p < 100; p++) index.upsert(`pet-${p}`, [randomKey(p * 10 + 1), randomKey(p * 10 + 2)]);
    /** One probe image's lookups: the keys of `pets` (their first or second image) seen turned by `turn`. */
    const lookups = (pets: number[], image: number, turn: number) => pets.map((p) => probeOf(randomKey(p * 10 + image), turn, 3)).reduce(joinLookups);
    // Per probe image, a first pass and further lookups. Probe A's first pass touches over an eighth of the rows (the
    // kernel sweeps them), probe B's a few.
    const probeA = [0, 1].map((i) => ({ first: lookups([...Array(30).keys()].map((p) => p + 10 * i), 1, 20), more: lookups([3, 40, 41 + i], 2, -28) }));
    const probeB = [0, 1, 2].map((i) => ({ first: lookups([60 + i, 70], 2, 0), more: lookups([60 + i, 80, 90], 1, 40) }));
    const whole = (probe: typeof probeA) => index.search(probe.map((image) => joinLookups(image.first, image.more)), 50);
    const first = (probe: typeof probeA) => index.search(probe.map((image) => image.first), 50);
    const keep = (probe: typeof probeA, token: string) => index.search(probe.map((image) => image.first), 50, { token, resume: false, keep: true });
    const resume = (probe: typeof probeA, token: string) => index.search(probe.map((image) => image.more), 50, { token, resume: true, keep: false });

    expect(whole(probeA)).not.toEqual(first(probeA));
    expect(whole(probeB)).not.toEqual(first(probeB));
    // Two searches in flight at once, each resumed after the other kept its votes.
    expect(keep(probeA, "a")).toEqual(first(probeA));
    expect(keep(probeB, "b")).toEqual(first(probeB));
    expect(index.holdsVotes("a", 2) && index.holdsVotes("b", 3)).toBe(true);
    expect(resume(probeA, "a")).toEqual(whole(probeA));
    expect(index.holdsVotes("a")).toBe(false);
    expect(resume(probeB, "b")).toEqual(whole(probeB));
    // Searches that ended in their first pass leave votes behind; a third search in flight evicts the oldest one's.
    keep(probeB, "c");
    keep(probeA, "d");
    keep(probeB, "e");
    expect(index.holdsVotes("c")).toBe(false);
    expect(resume(probeB, "e")).toEqual(whole(probeB));
    expect(resume(probeA, "d")).toEqual(whole(probeA));
    // A pet added or removed voids the kept votes.
    keep(probeA, "f");
    index.upsert("pet-new", [randomKey(5)]);
    expect(index.holdsVotes("f")).toBe(false);
    expect(() => resume(probeA, "f")).toThrow();
    keep(probeA, "g");
    expect(resume(probeA, "g")).toEqual(whole(probeA));
    index.dispose();
  });

  it.each(ENGINE_KERNELS)("%s: scores by the definition, bit for bit, in a gallery whose rows span several windows and whose lists are long", (kernel) => {
    // Under each kernel set: the native ones scan and sum in native code (scanLookups, finishProbeImage), the last in WebAssembly.
    useEngineKernel(kernel);
    // Few words and signatures near one centre a word: lists of ~500 postings, most of a lookup's within the threshold,
    // a row often twice in one list, and 2,400 rows (the kernel sums votes 1,024 rows at a time).
    const rand = prng(77);
    const WORDS = 64;
    const centres = Array.from({ length: WORDS }, () => [Math.floor(rand() * 0x1_0000_0000), Math.floor(rand() * 0x1_0000_0000)]);
    const near = (word: number, spread: number) => {
      let [low, high] = centres[word];
      for (let f = Math.floor(rand() * spread); f > 0; f--) {
        const bit = Math.floor(rand() * 64);
        if (bit < 32) low ^= 1 << bit;
        else high ^= 1 << (bit - 32);
      }
      return [low >>> 0, high >>> 0];
    };
    const key = (count: number): SearchKey => {
      const words = Uint16Array.from({ length: count }, () => Math.floor(rand() * WORDS));
      const signatures = new Uint32Array(count * 2);
      words.forEach((word, i) => signatures.set(near(word, 16), 2 * i));
      return { words, signatures, angles: Uint8Array.from({ length: count }, () => Math.floor(rand() * 256)) };
    };
    const pets = Array.from({ length: 600 }, (_, p) => Array.from({ length: 3 + (p % 3) }, () => key(12)));
    const index = new InvertedIndex();
    pets.forEach((images, p) => index.upsert(`pet-${p}`, images));
    const probe = Array.from({ length: 3 }, (): ProbeLookups => {
      const keypoints = 30;
      const count = keypoints * QUERY_WORDS;
      const words = Uint16Array.from({ length: count }, () => Math.floor(rand() * WORDS));
      const signatures = new Uint32Array(count * 2);
      words.forEach((word, i) => signatures.set(near(word, 24), 2 * i));
      return {
        count,
        keypoint: Uint32Array.from({ length: count }, (_, i) => Math.floor(i / QUERY_WORDS)),
        words,
        signatures,
        angles: Uint8Array.from({ length: count }, () => Math.floor(rand() * 256)),
        weights: Float32Array.from({ length: count }, () => rand()),
      };
    });
    const expected = referenceScores(pets, probe);
    expect(expected.size).toBeGreaterThan(500);
    const found = index.search(probe, pets.length);
    expect(found).toHaveLength(expected.size);
    for (const { petId, score } of found) expect(score).toBe(expected.get(petId));
    // The same search in two passes, the second resuming the first's votes, ends at the same scores.
    const first = { ...probe[0], count: probe[0].count / 2 };
    index.search([first, probe[1], probe[2]], 16, { token: "two-passes", resume: false, keep: true });
    const rest = (lookups: ProbeLookups): ProbeLookups => {
      const from = lookups.count / 2;
      return {
        count: lookups.count - from,
        keypoint: lookups.keypoint.slice(from),
        words: lookups.words.slice(from),
        signatures: lookups.signatures.slice(2 * from),
        angles: lookups.angles.slice(from),
        weights: lookups.weights.slice(from),
      };
    };
    const empty = (lookups: ProbeLookups): ProbeLookups => ({ ...rest(lookups), count: 0 });
    const resumed = index.search([rest(probe[0]), empty(probe[1]), empty(probe[2])], pets.length, { token: "two-passes", resume: true, keep: false });
    expect(resumed).toEqual(found);
  });

  it("holds a bounded number of bytes per image", () => {
    const index = new InvertedIndex();
    for (let p = 0; p < 200; p++) index.upsert(`pet-${p}`, [randomKey(p, INDEXED_POSTINGS)]);
    // 13 bytes a posting (row, 64-bit signature, angle), lists grown by doubling, plus per-image scratch.
    expect(index.bytes / 200).toBeLessThan(INDEXED_POSTINGS * 13 * 2 + 200);
  });
});

describe("inverted index memory", () => {
  it("returns its postings on dispose: the next index of the same size reuses them", () => {
    const build = () => {
      const index = new InvertedIndex();
      for (let p = 0; p < 100; p++) index.upsert(`pet-${p}`, [randomKey(p + 500, INDEXED_POSTINGS)]);
      index.search([probeOf(randomKey(510, INDEXED_POSTINGS))], 3);
      return index;
    };
    const first = build();
    expect(first.search([probeOf(randomKey(520, INDEXED_POSTINGS))], 1)[0].petId).toBe("pet-20");
    first.dispose();
    expect(first.size).toBe(0);
    const reserved = kernelHeap.reservedBytes;
    const second = build();
    expect(kernelHeap.reservedBytes).toBe(reserved);
    expect(second.search([probeOf(randomKey(520, INDEXED_POSTINGS))], 1)[0].petId).toBe("pet-20");
    second.dispose();
  });
});

describe("inverted index snapshots", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "index-snapshot-"));
  const save = (index: InvertedIndex, file: string) => {
    const fd = fs.openSync(file, "w");
    const sink = new FileSink(fd);
    index.writeSnapshot(sink);
    sink.flush();
    fs.closeSync(fd);
  };
  const restore = (index: InvertedIndex, file: string) => {
    const fd = fs.openSync(file, "r");
    try {
      index.readSnapshot(new FileSource(fd));
    } finally {
      fs.closeSync(fd);
    }
  };
  const keys = (p: number, v = 0) => [randomKey(p * 10 + 1 + v, 120), randomKey(p * 10 + 2 + v, 120), randomKey(p * 10 + 3 + v, 120)];

  /** 300 pets in two batches, some replaced and some removed (dead postings, not yet compacted). */
  function built(): InvertedIndex {
    const index = new InvertedIndex();
    const pets = Array.from({ length: 300 }, (_, p) => ({ petId: `pet-${p}`, keys: keys(p) }));
    index.upsertMany(packed(pets.slice(0, 200)));
    index.upsertMany(packed(pets.slice(200)));
    index.upsertMany(packed([{ petId: "pet-3", keys: keys(3, 5) }, { petId: "pet-4", keys: [] }]));
    for (let p = 10; p < 40; p++) index.remove(`pet-${p}`);
    return index;
  }
  const probes = [keys(3, 5)[1], keys(4)[0], keys(25)[0], keys(120)[2], keys(299)[1], keys(77)[0]].map((key, i) => probeOf(key, 10 * i));

  it("rebuilds the index it saved: the same pets, bytes and scores, bit for bit, and the same index after further changes", () => {
    const original = built();
    const file = path.join(dir, "whole.snapshot");
    save(original, file);
    const restored = new InvertedIndex();
    restore(restored, file);
    expect(restored.size).toBe(original.size);
    expect(restored.bytes).toBe(original.bytes);
    expect(restored.has("pet-4")).toBe(false);
    expect(restored.has("pet-3")).toBe(true);
    for (const probe of probes) expect(restored.search([probe], 20)).toEqual(original.search([probe], 20));
    expect(restored.search(probes.slice(0, 3), 50)).toEqual(original.search(probes.slice(0, 3), 50));
    // Lists go on growing from the restored tails; removals cross the compaction point on both alike.
    for (const index of [original, restored]) {
      index.upsertMany(packed([{ petId: "pet-new", keys: keys(900) }, { petId: "pet-120", keys: keys(120, 7) }]));
      for (let p = 40; p < 120; p++) index.remove(`pet-${p}`);
    }
    expect(restored.size).toBe(original.size);
    for (const probe of [...probes, probeOf(keys(900)[1], 40), probeOf(keys(120, 7)[0])]) expect(restored.search([probe], 20)).toEqual(original.search([probe], 20));
    // Restored again in place of itself, the index takes the blocks it freed: the memory does not grow.
    save(restored, file);
    const memory = kernelViews().u8.byteLength;
    restore(restored, file);
    expect(kernelViews().u8.byteLength).toBe(memory);
    expect(restored.search([probes[1]], 20)).toEqual(original.search([probes[1]], 20));
    original.dispose();
    restored.dispose();
  });

  it("writes the same bytes a slice at a time as at once, and stops when the index changes between slices", () => {
    const index = built();
    const whole = path.join(dir, "whole-at-once.snapshot");
    save(index, whole);
    /** Keeps what it is given (a slice's views are of kernel memory). */
    const kept: Buffer[] = [];
    const writer = index.snapshotWriter({ write: (bytes) => kept.push(Buffer.from(bytes)) });
    let slices = 1;
    while (!writer.write(16 * 1024)) slices++;
    expect(slices).toBeGreaterThan(10);
    expect(Buffer.concat(kept).equals(fs.readFileSync(whole))).toBe(true);
    // A search between slices changes nothing; a pet added does.
    const again = index.snapshotWriter({ write: () => undefined });
    expect(again.write(16 * 1024)).toBe(false);
    index.search([probes[0]], 5);
    expect(again.write(16 * 1024)).toBe(false);
    index.upsertMany(packed([{ petId: "pet-late", keys: keys(950) }]));
    expect(() => again.write(16 * 1024)).toThrow(SnapshotChangedError);
    index.dispose();
  });

  it("refuses a file that is cut short, altered in a block or not a snapshot, and is left empty", () => {
    const original = built();
    const file = path.join(dir, "damaged.snapshot");
    save(original, file);
    const bytes = fs.readFileSync(file);
    const damaged = [
      bytes.subarray(0, bytes.byteLength - 100),
      bytes.subarray(0, 50),
      Buffer.from(bytes).fill(7, bytes.byteLength - 5000, bytes.byteLength - 4000),
      Buffer.from("not a snapshot at all, just text"),
    ];
    for (const content of damaged) {
      fs.writeFileSync(file, content);
      const index = built();
      expect(() => restore(index, file)).toThrow(SnapshotCorruptError);
      expect(index.size).toBe(0);
      expect(index.search([probes[2]], 5)).toEqual([]);
      index.dispose();
    }
    original.dispose();
  });
});

describe("search keys", () => {
  it("round-trip through bytes and refuse damaged ones", () => {
    const key = randomKey(3);
    const bytes = serializeSearchKey(key);
    expect(deserializeSearchKey(bytes)).toEqual(key);
    expect(() => deserializeSearchKey(bytes.subarray(0, bytes.length - 1))).toThrow();
    const wrongMagic = bytes.slice();
    wrongMagic[0] ^= 0xff;
    expect(() => deserializeSearchKey(wrongMagic)).toThrow();
  });

  it("decode at any byte offset (packed in a gallery row) and are told from templates by their magic", () => {
    const key = randomKey(11, INDEXED_POSTINGS);
    const bytes = serializeSearchKey(key);
    for (const shift of [1, 2, 3]) {
      const packed = new Uint8Array(bytes.length + shift);
      packed.set(bytes, shift);
      expect(deserializeSearchKey(packed.subarray(shift))).toEqual(key);
      expect(isSearchKey(packed.subarray(shift))).toBe(true);
    }
    const notKey = bytes.slice();
    notKey[3] ^= 1;
    expect(isSearchKey(notKey)).toBe(false);
    expect(isSearchKey(bytes.subarray(0, 7))).toBe(false);
  });
});
