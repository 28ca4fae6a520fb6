import { ANGLE_BINS, HAMMING_SIGMA, HAMMING_THRESHOLD, QUERY_WORDS, VOCABULARY_WORDS } from "./parameters";
import type { ProbeLookups, SearchKey } from "./search-key";

/** One visual word's postings: the enrolled images (rows) holding a keypoint in the word, with its signature and angle. */
class PostingList {
  length = 0;
  rows = new Int32Array(0);
  low = new Uint32Array(0);
  high = new Uint32Array(0);
  angles = new Uint8Array(0);

  push(row: number, low: number, high: number, angle: number): void {
    if (this.length === this.rows.length) this.grow(Math.max(8, this.length * 2));
    this.rows[this.length] = row;
    this.low[this.length] = low;
    this.high[this.length] = high;
    this.angles[this.length] = angle;
    this.length++;
  }

  /** Keeps the postings whose row maps to a new row (>= 0), renumbered. */
  compact(newRow: Int32Array): void {
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const row = newRow[this.rows[i]];
      if (row < 0) continue;
      this.rows[kept] = row;
      this.low[kept] = this.low[i];
      this.high[kept] = this.high[i];
      this.angles[kept] = this.angles[i];
      kept++;
    }
    this.length = kept;
    this.grow(kept);
  }

  get bytes(): number {
    return this.rows.byteLength + this.low.byteLength + this.high.byteLength + this.angles.byteLength;
  }

  private grow(capacity: number): void {
    const resize = <T extends Int32Array | Uint32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old.subarray(0, Math.min(this.length, capacity)) as never);
      return next;
    };
    this.rows = resize(this.rows, (n) => new Int32Array(n));
    this.low = resize(this.low, (n) => new Uint32Array(n));
    this.high = resize(this.high, (n) => new Uint32Array(n));
    this.angles = resize(this.angles, (n) => new Uint8Array(n));
  }
}

/** Vote weight by Hamming distance (0 beyond the threshold). */
const HAMMING_WEIGHT = Float32Array.from({ length: 65 }, (_, h) => (h <= HAMMING_THRESHOLD ? Math.exp(-(h * h) / (HAMMING_SIGMA * HAMMING_SIGMA)) : 0));
const ANGLE_SHIFT = 8 - Math.log2(ANGLE_BINS);
/** Set bits of every 16-bit value: two lookups count a 32-bit word. */
const POPCOUNT16 = Uint8Array.from({ length: 65536 }, (_, v) => {
  let bits = 0;
  for (let x = v; x; x &= x - 1) bits++;
  return bits;
});

export interface PetScore {
  petId: string;
  score: number;
}

/**
 * The inverted file over enrolled images' search keys, grouped by pet. Adding is O(keypoints); removing
 * marks the pet's images dead, and the postings are compacted once a quarter of them are dead.
 */
export class InvertedIndex {
  private readonly lists = Array.from({ length: VOCABULARY_WORDS }, () => new PostingList());
  private rowPet = new Int32Array(1024);
  private rowPostings = new Int32Array(1024);
  private rowCount = 0;
  private readonly petIds: string[] = [];
  private readonly petIndex = new Map<string, number>();
  private readonly petRows: (number[] | null)[] = [];
  private livePets = 0;
  private livePostings = 0;
  private deadPostings = 0;
  // Per-search scratch, sized to the rows.
  private histograms = new Float32Array(0);
  private stamps = new Int32Array(0);
  private stamp = 0;

  get size(): number {
    return this.livePets;
  }

  get bytes(): number {
    const rows = this.rowPet.byteLength + this.rowPostings.byteLength + this.histograms.byteLength + this.stamps.byteLength;
    return this.lists.reduce((sum, list) => sum + list.bytes, 0) + rows;
  }

  has(petId: string): boolean {
    const pet = this.petIndex.get(petId);
    return pet !== undefined && this.petRows[pet] !== null;
  }

  upsert(petId: string, keys: readonly SearchKey[]): void {
    this.remove(petId);
    if (keys.length === 0) return;
    let pet = this.petIndex.get(petId);
    if (pet === undefined) {
      pet = this.petIds.length;
      this.petIds.push(petId);
      this.petIndex.set(petId, pet);
      this.petRows.push(null);
    }
    const rows: number[] = [];
    for (const key of keys) {
      const row = this.newRow(pet, key.words.length);
      rows.push(row);
      for (let i = 0; i < key.words.length; i++) {
        this.lists[key.words[i]].push(row, key.signatures[i * 2], key.signatures[i * 2 + 1], key.angles[i]);
      }
      this.livePostings += key.words.length;
    }
    this.petRows[pet] = rows;
    this.livePets++;
  }

  remove(petId: string): boolean {
    const pet = this.petIndex.get(petId);
    const rows = pet === undefined ? null : this.petRows[pet];
    if (pet === undefined || rows === null) return false;
    let postings = 0;
    for (const row of rows) {
      this.rowPet[row] = -1;
      postings += this.rowPostings[row];
    }
    this.petRows[pet] = null;
    this.livePets--;
    this.livePostings -= postings;
    this.deadPostings += postings;
    if (this.deadPostings > this.livePostings / 3) this.compact();
    return true;
  }

  /**
   * Each probe image votes for enrolled images: a probe keypoint gives each enrolled image at most one
   * vote (its first signature match), weighted by Hamming distance and word rarity, binned by the change
   * of orientation; an enrolled image scores its best pair of adjacent bins. A pet takes, per probe
   * image, its best image's score; its session score is the mean of its two best probe images' scores
   * (the rule of the full matcher). The `limit` best pets, best first.
   */
  search(probe: readonly ProbeLookups[], limit: number): PetScore[] {
    this.ensureScratch();
    const idf = this.idfSquared();
    const perProbe = probe.map((lookups) => this.scoreProbeImage(lookups, idf));
    const session = new Map<number, number[]>();
    perProbe.forEach((bestByPet, p) => {
      for (const [pet, score] of bestByPet) {
        let scores = session.get(pet);
        if (!scores) session.set(pet, (scores = new Array<number>(probe.length).fill(0)));
        scores[p] = score;
      }
    });
    const ranked: PetScore[] = [];
    for (const [pet, scores] of session) {
      const top = scores.sort((a, b) => b - a).slice(0, 2);
      ranked.push({ petId: this.petIds[pet], score: top.reduce((a, b) => a + b, 0) / top.length });
    }
    ranked.sort((a, b) => b.score - a.score || (a.petId < b.petId ? -1 : 1));
    return ranked.slice(0, limit);
  }

  private scoreProbeImage(lookups: ProbeLookups, idf: Float32Array): Map<number, number> {
    const touched: number[] = [];
    const { histograms, stamps, rowPet } = this;
    for (let i = 0; i < lookups.count; i++) {
      const stamp = ++this.stamp;
      const angle = lookups.angles[i];
      for (let w = 0; w < QUERY_WORDS; w++) {
        const word = lookups.words[i * QUERY_WORDS + w];
        const list = this.lists[word];
        const qLow = lookups.signatures[(i * QUERY_WORDS + w) * 2];
        const qHigh = lookups.signatures[(i * QUERY_WORDS + w) * 2 + 1];
        const weight = idf[word];
        const { rows, low, high, angles } = list;
        // The signature test first: it reads the lists in order and rejects ~95 % of postings.
        for (let j = 0; j < list.length; j++) {
          const x = low[j] ^ qLow;
          const lowBits = POPCOUNT16[x & 0xffff] + POPCOUNT16[x >>> 16];
          if (lowBits > HAMMING_THRESHOLD) continue;
          const y = high[j] ^ qHigh;
          const distance = lowBits + POPCOUNT16[y & 0xffff] + POPCOUNT16[y >>> 16];
          if (distance > HAMMING_THRESHOLD) continue;
          const row = rows[j];
          if (stamps[row] === stamp || rowPet[row] < 0) continue;
          if (stamps[row] === 0) touched.push(row);
          stamps[row] = stamp;
          histograms[row * ANGLE_BINS + (((angle - angles[j]) & 255) >> ANGLE_SHIFT)] += weight * HAMMING_WEIGHT[distance];
        }
      }
    }
    const bestByPet = new Map<number, number>();
    for (const row of touched) {
      const base = row * ANGLE_BINS;
      let best = 0;
      for (let b = 0; b < ANGLE_BINS; b++) best = Math.max(best, histograms[base + b] + histograms[base + ((b + 1) % ANGLE_BINS)]);
      histograms.fill(0, base, base + ANGLE_BINS);
      stamps[row] = 0;
      const pet = rowPet[row];
      if (best > (bestByPet.get(pet) ?? 0)) bestByPet.set(pet, best);
    }
    return bestByPet;
  }

  /** Squared inverse document frequency of each word, from the current posting counts. */
  private idfSquared(): Float32Array {
    const total = this.livePostings + this.deadPostings + 1;
    return Float32Array.from(this.lists, (list) => Math.log(total / (list.length + 1)) ** 2);
  }

  private newRow(pet: number, postings: number): number {
    if (this.rowCount === this.rowPet.length) {
      const grow = (old: Int32Array) => {
        const grown = new Int32Array(old.length * 2);
        grown.set(old);
        return grown;
      };
      this.rowPet = grow(this.rowPet);
      this.rowPostings = grow(this.rowPostings);
    }
    this.rowPet[this.rowCount] = pet;
    this.rowPostings[this.rowCount] = postings;
    return this.rowCount++;
  }

  private ensureScratch(): void {
    if (this.stamps.length < this.rowCount) {
      const capacity = this.rowPet.length;
      this.stamps = new Int32Array(capacity);
      this.histograms = new Float32Array(capacity * ANGLE_BINS);
      this.stamp = 0;
    }
    if (this.stamp > 2_000_000_000) {
      this.stamps.fill(0);
      this.stamp = 0;
    }
  }

  private compact(): void {
    const newRow = new Int32Array(this.rowCount).fill(-1);
    let next = 0;
    for (let row = 0; row < this.rowCount; row++) if (this.rowPet[row] >= 0) newRow[row] = next++;
    for (const list of this.lists) list.compact(newRow);
    const rowPet = new Int32Array(Math.max(1024, next));
    const rowPostings = new Int32Array(rowPet.length);
    for (let row = 0; row < this.rowCount; row++) {
      if (newRow[row] < 0) continue;
      rowPet[newRow[row]] = this.rowPet[row];
      rowPostings[newRow[row]] = this.rowPostings[row];
    }
    for (const rows of this.petRows) if (rows) rows.forEach((row, i) => (rows[i] = newRow[row]));
    this.rowPet = rowPet;
    this.rowPostings = rowPostings;
    this.rowCount = next;
    this.livePostings = this.lists.reduce((sum, list) => sum + list.length, 0);
    this.deadPostings = 0;
    this.stamps = new Int32Array(0);
    this.histograms = new Float32Array(0);
  }
}
