import { appendPostingRecords, countKeyWords, finishProbeImage, kernelHeap, kernelViews, partitionKeyPostings, scanLookups, setHammingWeights, type KernelViews, type LookupBatch } from "./simd/posting-kernel";
import { keyOffsets, packPets, type PackedPets } from "./packed-pets";
import { ANGLE_BINS, HAMMING_SIGMA, KEPT_SEARCHES, HAMMING_THRESHOLD, STOP_WORD_FACTOR, STOP_WORD_MIN_POSTINGS, VOCABULARY_WORDS } from "./parameters";
import { serializeSearchKey, type ProbeLookups, type SearchKey } from "./search-key";
import { SnapshotChangedError, SnapshotCorruptError, type SnapshotSink, type SnapshotSource, type SnapshotWriter } from "./snapshot-stream";

/**
 * Posting blocks: a list's first block holds FIRST_BLOCK postings, each next one twice as many up to
 * LAST_BLOCK, so that a small gallery's 8,192 lists stay small and a large one's are long runs: the scan is bound by
 * memory and streams a long run faster, for a few % more bytes a pet (decisions/0035 measured the sizes).
 * Layout in posting-kernel.wat.
 */
const FIRST_BLOCK = 4;
const LAST_BLOCK = 2048;
const BLOCK_HEADER = 8;
const blockBytes = (capacity: number) => BLOCK_HEADER + 13 * capacity;
// A block's header fields (byte offsets) and postings, as the kernel reads them.
const COUNT_FIELD = 4;
const CAPACITY_FIELD = 6;
const nextOf = (views: KernelViews, block: number) => views.i32[block >>> 2];
const countOf = (views: KernelViews, block: number) => views.u16[(block + COUNT_FIELD) >>> 1];
const capacityOf = (views: KernelViews, block: number) => views.u16[(block + CAPACITY_FIELD) >>> 1];
/** Index (in u32 units) of posting j's signature: low word, then high word. */
const signatureAt = (block: number, j: number) => (block + BLOCK_HEADER + 8 * j) >>> 2;
/** Index (in i32 units) of posting j's image row. */
const rowAt = (block: number, capacity: number, j: number) => ((block + BLOCK_HEADER + 8 * capacity) >>> 2) + j;
/** Byte address of posting j's orientation. */
const angleAt = (block: number, capacity: number, j: number) => block + BLOCK_HEADER + 12 * capacity + j;

/** The capacity of each block of a list of `length` postings, in order: every block full but the last. */
function blockCapacities(length: number): number[] {
  const capacities: number[] = [];
  for (let held = 0, capacity = FIRST_BLOCK; held < length; held += capacity) {
    if (capacities.length > 0) capacity = Math.min(LAST_BLOCK, capacity * 2);
    capacities.push(capacity);
  }
  return capacities;
}

/** A shard snapshot's first and last four bytes ("RHIX"), and its layout's version (writeSnapshot). */
const SNAPSHOT_MAGIC = 0x58494852;
const SNAPSHOT_FORMAT = 1;
/** Values as a snapshot holds them: 32-bit integers, little-endian (the platform's). */
const int32Bytes = (values: ArrayLike<number>) => new Uint8Array(Int32Array.from(values).buffer);

/** Vote weight by Hamming distance (0 beyond the threshold), as f32 values. */
const HAMMING_WEIGHT = Float32Array.from({ length: 65 }, (_, h) => (h <= HAMMING_THRESHOLD ? Math.exp(-(h * h) / (HAMMING_SIGMA * HAMMING_SIGMA)) : 0));
setHammingWeights(HAMMING_WEIGHT);
const ANGLE_SHIFT = 8 - Math.log2(ANGLE_BINS);
const BINS_LOG2 = Math.log2(ANGLE_BINS);
/** A probe image's votes are summed WINDOW_ROWS image rows at a time (`finish` in posting-kernel.wat): 64 KB of histograms. */
const WINDOW_SHIFT = 10;
const WINDOW_ROWS = 1 << WINDOW_SHIFT;
/** Bytes of a logged vote (posting-kernel.wat). */
const VOTE_BYTES = 16;
/** A vote carries its probe keypoint's stamp above the orientation bin in 31 bits; the count starts again below this. */
const STAMP_LIMIT = 2 ** (31 - BINS_LOG2) - 2 ** 20;

/**
 * Keeping a search's votes for its next pass (the cascade's deep pass adds the ± 40° frames' votes to the fast pass's
 * rather than casting them all again): `keep` keeps this call's votes under `token`; `resume` adds this call's lookups
 * to the votes kept under `token` (`holdsVotes`). The scores are those of one search by all the lookups, bit for bit.
 */
export interface VoteKeeping {
  token: string;
  resume: boolean;
  keep: boolean;
}

/** A search's lookups numbered one after another across its probe images: at most this many. */
const LOOKUP_LIMIT = 2 ** 20;

/** Where each lookup's votes are in the staging log (`scanInWordOrder`), by lookup. */
interface ScannedLookups {
  /** Each probe image's first lookup. */
  firsts: number[];
  starts: Int32Array;
  counts: Int32Array;
}

/** One probe image's kept votes: its vote log (posting-kernel.wat) and how many votes it holds. */
interface KeptImage {
  log: KernelArray;
  count: number;
}

interface KeptVotes {
  token: string;
  version: number;
  /** Holds votes (kept and not yet resumed). */
  held: boolean;
  used: number;
  images: KeptImage[];
}

/** A snapshot's header (InvertedIndex.writeSnapshot). */
interface SnapshotHeader {
  vocabularyWords: number;
  rowCount: number;
  rowCapacity: number;
  livePets: number;
  livePostings: number;
  deadPostings: number;
  petIds: string[];
}

export interface PetScore {
  petId: string;
  score: number;
}

/** A region of kernel memory holding `capacity` elements of `elementBytes`. */
class KernelArray {
  address = 0;
  capacity = 0;

  constructor(private readonly elementBytes: number) {}

  get bytes(): number {
    return this.capacity * this.elementBytes;
  }

  /** Makes room for `capacity` elements: keeps the contents (`keep`) or starts zeroed. */
  ensure(capacity: number, keep: boolean): void {
    if (capacity <= this.capacity) return;
    const next = kernelHeap.alloc(capacity * this.elementBytes);
    if (keep && this.address) kernelViews().u8.copyWithin(next, this.address, this.address + this.bytes);
    this.release();
    this.address = next;
    this.capacity = capacity;
  }

  release(): void {
    if (this.address) kernelHeap.free(this.address, this.bytes);
    this.address = 0;
    this.capacity = 0;
  }
}

/** This thread's staging region for a batch being indexed (grown to the largest batch, in powers of two; never released). */
const staging = new KernelArray(1);
/** Words `word >> BUCKET_SHIFT` share a bucket of the kernel's first pass (`partition` in posting-kernel.wat). */
const BUCKET_SHIFT = 6;
const BUCKETS = VOCABULARY_WORDS >>> BUCKET_SHIFT;
const RECORD_BYTES = 16;

interface StagedBatch {
  keys: number;
  counts: number;
  buckets: number;
  cursors: number;
  records: number;
}

/**
 * Copies a batch's packed keys into kernel memory with the tables the kernel reads: the key table (each key's address and
 * row), every word's counter (zeroed), every bucket's and word's cursor, and room for a record a posting. Addresses in
 * kernel memory.
 */
function stageBatch(bytes: Uint8Array, offsets: readonly number[], rows: readonly number[], postings: number): StagedBatch {
  const records = 0;
  const keys = records + postings * RECORD_BYTES;
  const counts = keys + offsets.length * 8;
  const buckets = counts + VOCABULARY_WORDS * 4;
  const cursors = buckets + BUCKETS * 4;
  const keyBytes = cursors + VOCABULARY_WORDS * 8;
  const needed = keyBytes + bytes.byteLength;
  if (staging.capacity < needed) {
    staging.release();
    staging.ensure(2 ** Math.ceil(Math.log2(needed)), false);
  }
  const at = (offset: number) => staging.address + offset;
  const { u8, i32 } = kernelViews();
  u8.set(bytes, at(keyBytes));
  for (let k = 0; k < offsets.length; k++) {
    i32[(at(keys) >>> 2) + 2 * k] = at(keyBytes) + offsets[k];
    i32[(at(keys) >>> 2) + 2 * k + 1] = rows[k];
  }
  i32.fill(0, at(counts) >>> 2, (at(counts) >>> 2) + VOCABULARY_WORDS);
  return { keys: at(keys), counts: at(counts), buckets: at(buckets), cursors: at(cursors), records: at(records) };
}

/**
 * The inverted file over enrolled images' search keys, grouped by pet. The postings live in this
 * thread's kernel memory, where posting-kernel.wat scans them. Adding is O(keypoints); removing marks
 * the pet's images dead, and the postings are compacted once a quarter of them are dead. `dispose()`
 * returns the memory; an index that is dropped without it leaks its postings.
 */
export class InvertedIndex {
  private readonly heads = new Int32Array(VOCABULARY_WORDS);
  private readonly tails = new Int32Array(VOCABULARY_WORDS);
  private readonly lengths = new Int32Array(VOCABULARY_WORDS);
  private blockBytes = 0;
  /** Image row → pet number, -1 once removed (read by the kernel). */
  private readonly rowPet = new KernelArray(4);
  private rowPostings = new Int32Array(1024);
  private rowCount = 0;
  private readonly petIds: string[] = [];
  private readonly petIndex = new Map<string, number>();
  private readonly petRows: (number[] | null)[] = [];
  /** Each pet's number of images (its rows), as petRows holds them: read for every pet a probe image scores. */
  private petImages = new Int32Array(1024);
  private livePets = 0;
  private livePostings = 0;
  private deadPostings = 0;
  // Per-search scratch: a probe image's vote log and the same votes by window of rows, a cursor per window, one
  // window's histograms, flags and touched rows, and per pet.
  private readonly log = new KernelArray(VOTE_BYTES);
  /** Every probe image's votes as the scan in word order casts them (`scanInWordOrder`). */
  private readonly scanLog = new KernelArray(VOTE_BYTES);
  private readonly sorted = new KernelArray(VOTE_BYTES);
  private readonly cursors = new KernelArray(4);
  private readonly windowHistograms = new KernelArray(4 * ANGLE_BINS);
  private readonly windowFlags = new KernelArray(4);
  private readonly windowRows = new KernelArray(4);
  /** Per pet, its two best image scores for the current probe image (f64 best, then second). */
  private readonly petBest = new KernelArray(16);
  private readonly petTouched = new KernelArray(4);
  private bestProbe = new Float64Array(0);
  private secondProbe = new Float64Array(0);
  private stamp = 0;
  /** Changes with every pet added or removed: kept votes are valid in the version they were cast in. */
  private version = 0;
  private readonly kept: KeptVotes[] = [];
  private keptClock = 0;

  get size(): number {
    return this.livePets;
  }

  get bytes(): number {
    const kernel = [this.rowPet, ...this.scratchArrays(), this.petBest, this.petTouched, ...this.keptArrays()];
    return this.blockBytes + kernel.reduce((sum, array) => sum + array.bytes, 0) + this.rowPostings.byteLength;
  }

  private keptArrays(): KernelArray[] {
    return this.kept.flatMap((k) => k.images.map((image) => image.log));
  }

  private scratchArrays(): KernelArray[] {
    return [this.log, this.scanLog, this.sorted, this.cursors, this.windowHistograms, this.windowFlags, this.windowRows];
  }

  has(petId: string): boolean {
    const pet = this.petIndex.get(petId);
    return pet !== undefined && this.petRows[pet] !== null;
  }

  upsert(petId: string, keys: readonly SearchKey[]): void {
    this.upsertMany(packPets([{ petId, templates: keys.map((key) => serializeSearchKey(key)) }]));
  }

  /**
   * Adds or replaces many pets at once (a gallery load's batch), indexed straight from their packed search keys: the
   * same index as upserting them one by one, in order. The keys are copied into kernel memory once; the kernel counts
   * each word's new postings, each list is given the blocks they need at once, and the kernel writes every posting in
   * place, in two passes for the cache's sake (`count`, `partition` and `append` in posting-kernel.wat).
   */
  upsertMany(batch: PackedPets): void {
    this.version++;
    // A pet listed twice keeps its last images (in the place of its first), as before.
    const last = new Map<string, number>();
    batch.petIds.forEach((petId, i) => last.set(petId, i));
    // Removals first: a compaction they cause renumbers rows, so it must come before the new rows are read.
    for (const petId of last.keys()) this.remove(petId);
    const keys: number[] = [];
    const rows: number[] = [];
    let postings = 0;
    for (const [petId, i] of last) {
      const offsets = keyOffsets(batch, i);
      if (offsets.length === 0) continue;
      let pet = this.petIndex.get(petId);
      if (pet === undefined) {
        pet = this.petIds.length;
        this.petIds.push(petId);
        this.petIndex.set(petId, pet);
        this.petRows.push(null);
      }
      const petRows: number[] = [];
      for (const offset of offsets) {
        const count = batch.bytes[offset + 6] | (batch.bytes[offset + 7] << 8);
        const row = this.newRow(pet, count);
        petRows.push(row);
        keys.push(offset);
        rows.push(row);
        this.livePostings += count;
        postings += count;
      }
      this.setPetRows(pet, petRows);
      this.livePets++;
    }
    if (keys.length === 0) return;
    const staged = stageBatch(batch.bytes, keys, rows, postings);
    countKeyWords(staged.keys, keys.length, staged.counts);
    const counts = kernelViews().u32.slice(staged.counts >>> 2, (staged.counts >>> 2) + VOCABULARY_WORDS);
    // Each bucket's records start where its words' postings do in word order.
    const buckets = new Int32Array(BUCKETS);
    for (let word = 0, at = staged.records; word < VOCABULARY_WORDS; word++) {
      if ((word & ((1 << BUCKET_SHIFT) - 1)) === 0) buckets[word >>> BUCKET_SHIFT] = at;
      at += counts[word] * RECORD_BYTES;
    }
    kernelViews().i32.set(buckets, staged.buckets >>> 2);
    partitionKeyPostings(staged.keys, keys.length, staged.buckets, BUCKET_SHIFT);
    const cursors = new Int32Array(VOCABULARY_WORDS * 2);
    for (let word = 0; word < VOCABULARY_WORDS; word++) if (counts[word] > 0) this.reserve(word, counts[word], cursors);
    kernelViews().i32.set(cursors, staged.cursors >>> 2);
    appendPostingRecords(staged.records, staged.records + postings * RECORD_BYTES, staged.cursors);
  }

  /**
   * Makes room for `count` more postings at the end of a word's list (new blocks as pushes one by one would add them,
   * each block's count set to what it will hold), and sets the word's cursor: the block and slot of its first new posting.
   */
  private reserve(word: number, count: number, cursors: Int32Array): void {
    let views = kernelViews();
    let block = this.tails[word];
    let left = count;
    let first = 0;
    let slot = 0;
    if (block !== 0) {
      const held = countOf(views, block);
      const take = Math.min(left, capacityOf(views, block) - held);
      if (take > 0) {
        first = block;
        slot = held;
        views.u16[(block + COUNT_FIELD) >>> 1] = held + take;
        left -= take;
      }
    }
    while (left > 0) {
      block = this.newBlock(word);
      views = kernelViews();
      const take = Math.min(left, capacityOf(views, block));
      views.u16[(block + COUNT_FIELD) >>> 1] = take;
      if (first === 0) first = block;
      left -= take;
    }
    cursors[word * 2] = first;
    cursors[word * 2 + 1] = slot;
    this.lengths[word] += count;
  }

  private setPetRows(pet: number, rows: number[]): void {
    this.petRows[pet] = rows;
    if (pet >= this.petImages.length) {
      const grown = new Int32Array(Math.max(2 * this.petImages.length, pet + 1));
      grown.set(this.petImages);
      this.petImages = grown;
    }
    this.petImages[pet] = rows.length;
  }

  remove(petId: string): boolean {
    const pet = this.petIndex.get(petId);
    const rows = pet === undefined ? null : this.petRows[pet];
    if (pet === undefined || rows === null) return false;
    const { i32 } = kernelViews();
    let postings = 0;
    for (const row of rows) {
      i32[(this.rowPet.address >>> 2) + row] = -1;
      postings += this.rowPostings[row];
    }
    this.petRows[pet] = null;
    this.version++;
    this.livePets--;
    this.livePostings -= postings;
    this.deadPostings += postings;
    if (this.deadPostings > this.livePostings / 3) this.compact();
    return true;
  }

  /** Returns every byte of kernel memory the index holds; the index is empty afterwards. */
  dispose(): void {
    for (let word = 0; word < VOCABULARY_WORDS; word++) this.freeList(word);
    for (const array of [this.rowPet, ...this.scratchArrays(), this.petBest, this.petTouched, ...this.keptArrays()]) array.release();
    this.kept.length = 0;
    this.version++;
    this.petIds.length = 0;
    this.petIndex.clear();
    this.petRows.length = 0;
    this.rowCount = 0;
    this.livePets = this.livePostings = this.deadPostings = 0;
  }

  /**
   * Writes the whole index (every list's blocks as they are in kernel memory, the rows, the pets) so that `readSnapshot`
   * rebuilds it without indexing a key again: the same postings in the same order, the same scores, bit for bit.
   * Layout, little-endian: magic, format, the header's length and the header (JSON: counts and pet ids), each pet's
   * row count (-1: removed) and rows, every word's list length, each row's pet and postings, every list's blocks in word
   * order (their capacities follow from the length: `blockCapacities`), magic.
   */
  writeSnapshot(sink: SnapshotSink): void {
    const writer = this.snapshotWriter(sink);
    while (!writer.write(Infinity));
  }

  /**
   * `writeSnapshot`'s bytes a slice at a time, so that other work of the thread (searches) can run between slices: each
   * `write(budget)` writes about `budget` bytes of lists (the head with the first) and says whether the snapshot is
   * whole. Throws SnapshotChangedError when the index changed since the first slice (a pet added or removed).
   */
  snapshotWriter(sink: SnapshotSink): SnapshotWriter {
    const version = this.version;
    let word = -1;
    return {
      write: (budget) => {
        if (this.version !== version) throw new SnapshotChangedError("the gallery changed while it was saved");
        if (word < 0) {
          this.writeSnapshotHead(sink);
          word = 0;
        }
        // Nothing is allocated while writing: the views stay valid.
        const views = kernelViews();
        for (let written = 0; word < VOCABULARY_WORDS && written < budget; word++) {
          for (let block = this.heads[word]; block !== 0; block = nextOf(views, block)) {
            const bytes = blockBytes(capacityOf(views, block));
            sink.write(views.u8.subarray(block, block + bytes));
            written += bytes;
          }
        }
        if (word < VOCABULARY_WORDS) return false;
        sink.write(int32Bytes([SNAPSHOT_MAGIC]));
        return true;
      },
    };
  }

  private writeSnapshotHead(sink: SnapshotSink): void {
    const header: SnapshotHeader = {
      vocabularyWords: VOCABULARY_WORDS,
      rowCount: this.rowCount,
      rowCapacity: this.rowPostings.length,
      livePets: this.livePets,
      livePostings: this.livePostings,
      deadPostings: this.deadPostings,
      petIds: this.petIds,
    };
    const json = Buffer.from(JSON.stringify(header));
    const padded = Buffer.alloc((json.byteLength + 3) & ~3, 0x20);
    json.copy(padded);
    sink.write(int32Bytes([SNAPSHOT_MAGIC, SNAPSHOT_FORMAT, padded.byteLength]));
    sink.write(padded);
    sink.write(int32Bytes(this.petRows.map((rows) => (rows === null ? -1 : rows.length))));
    sink.write(int32Bytes(this.petRows.flatMap((rows) => rows ?? [])));
    sink.write(int32Bytes(this.lengths));
    const rowPet = this.rowPet.address >>> 2;
    sink.write(int32Bytes(kernelViews().i32.subarray(rowPet, rowPet + this.rowCount)));
    sink.write(int32Bytes(this.rowPostings.subarray(0, this.rowCount)));
  }

  /**
   * Replaces this index by the one `writeSnapshot` wrote. Throws SnapshotCorruptError (and leaves the index empty) when
   * the bytes are not such a snapshot, or one of another vocabulary, or do not add up.
   */
  readSnapshot(source: SnapshotSource): void {
    this.dispose();
    try {
      this.readSnapshotInto(source);
    } catch (error) {
      this.dispose();
      throw error instanceof SyntaxError ? new SnapshotCorruptError(`its header: ${error.message}`) : error;
    }
  }

  private readSnapshotInto(source: SnapshotSource): void {
    const int32 = (count: number) => {
      const copy = new Uint8Array(count * 4);
      copy.set(source.read(count * 4));
      return new Int32Array(copy.buffer);
    };
    const corrupt = (what: string) => new SnapshotCorruptError(`not a gallery shard snapshot of this engine: ${what}`);
    const [magic, format, headerBytes] = int32(3);
    if (magic !== SNAPSHOT_MAGIC || format !== SNAPSHOT_FORMAT) throw corrupt("magic or format");
    const header = JSON.parse(Buffer.from(source.read(headerBytes)).toString()) as SnapshotHeader;
    if (header.vocabularyWords !== VOCABULARY_WORDS) throw corrupt("vocabulary");
    const counts = [header.rowCount, header.rowCapacity, header.livePets, header.livePostings, header.deadPostings];
    if (!counts.every((n) => Number.isSafeInteger(n) && n >= 0) || !Array.isArray(header.petIds)) throw corrupt("its header");
    const petRowCounts = int32(header.petIds.length);
    const petRows = int32(petRowCounts.reduce((sum, n) => sum + Math.max(0, n), 0));
    const lengths = int32(VOCABULARY_WORDS);
    const rowPets = int32(header.rowCount);
    const rowPostings = int32(header.rowCount);
    if (lengths.reduce((sum, n) => sum + n, 0) !== header.livePostings + header.deadPostings) throw corrupt("posting counts");
    let at = 0;
    header.petIds.forEach((petId, pet) => {
      const count = petRowCounts[pet];
      this.petIds.push(petId);
      this.petIndex.set(petId, pet);
      this.petRows.push(null);
      if (count >= 0) this.setPetRows(pet, Array.from(petRows.subarray(at, (at += count))));
    });
    this.rowCount = header.rowCount;
    this.rowPostings = new Int32Array(Math.max(header.rowCapacity, header.rowCount));
    this.rowPostings.set(rowPostings);
    this.rowPet.ensure(this.rowPostings.length, false);
    kernelViews().i32.set(rowPets, this.rowPet.address >>> 2);
    this.livePets = header.livePets;
    this.livePostings = header.livePostings;
    this.deadPostings = header.deadPostings;
    // The lists' memory in one growth, not an eighth at a time.
    kernelHeap.prepare(lengths.reduce((sum, length) => sum + blockCapacities(length).reduce((bytes, capacity) => bytes + blockBytes(capacity), 0), 0));
    for (let word = 0; word < VOCABULARY_WORDS; word++) {
      let left = lengths[word];
      for (const capacity of blockCapacities(left)) {
        const bytes = blockBytes(capacity);
        const block = kernelHeap.alloc(bytes);
        this.blockBytes += bytes;
        const views = kernelViews();
        views.u8.set(source.read(bytes), block);
        if (capacityOf(views, block) !== capacity || countOf(views, block) !== Math.min(capacity, left)) throw corrupt(`word ${word}'s blocks`);
        views.i32[block >>> 2] = 0;
        if (this.tails[word] === 0) this.heads[word] = block;
        else views.i32[this.tails[word] >>> 2] = block;
        this.tails[word] = block;
        left -= capacity;
      }
      this.lengths[word] = lengths[word];
    }
    if (int32(1)[0] !== SNAPSHOT_MAGIC) throw corrupt("its end");
    this.version++;
  }

  /**
   * Each probe image votes for enrolled images: a probe keypoint gives each enrolled image at most one
   * vote (its first signature match), weighted by Hamming distance and word rarity, binned by the change
   * of orientation; an enrolled image scores its best pair of adjacent bins. A pet takes, per probe
   * image, the mean of its two best images' scores (parameters.ts, "1:N inverted index"); its session
   * score is the mean of its two best probe images' scores (the rule of the full matcher). The `limit`
   * best pets, best first.
   */
  search(probe: readonly ProbeLookups[], limit: number, votes?: VoteKeeping): PetScore[] {
    if (limit <= 0 || probe.length === 0) return [];
    this.ensureScratch(votes?.resume === true);
    const idf = this.idfSquared();
    const scored: number[] = [];
    const kept = votes ? this.keptVotesFor(votes, probe.length) : null;
    const scan = this.scanInWordOrder(probe, idf);
    probe.forEach((lookups, image) => this.scoreProbeImage(scan, image, lookups, scored, kept?.images[image], votes));
    if (kept) {
      kept.token = votes!.token;
      kept.held = votes!.keep;
      kept.used = ++this.keptClock;
    }
    const divisor = Math.min(2, probe.length);
    const best: PetScore[] = [];
    for (const pet of scored) {
      const score = (this.bestProbe[pet] + this.secondProbe[pet]) / divisor;
      this.bestProbe[pet] = this.secondProbe[pet] = 0;
      insertRanked(best, this.petIds[pet], score, limit);
    }
    return best;
  }

  /**
   * Whether this index holds the votes of search `token` (kept by a `search` with `keep`, for `probeImages` probe
   * images if given) and they are still valid: no pet was added or removed since.
   */
  holdsVotes(token: string, probeImages?: number): boolean {
    const kept = this.kept.find((k) => k.token === token);
    return kept !== undefined && kept.held && kept.version === this.version && (probeImages === undefined || kept.images.length === probeImages);
  }

  /**
   * The kept votes a search writes to: its own when it resumes them (`holdsVotes` must have said so), otherwise a free or
   * the least recently used of KEPT_SEARCHES sets, emptied. Sized to the rows.
   */
  private keptVotesFor(votes: VoteKeeping, probeImages: number): KeptVotes {
    const own = this.kept.find((k) => k.token === votes.token);
    if (votes.resume) {
      if (!own || !this.holdsVotes(votes.token, probeImages)) throw new Error("no votes kept for this search");
      return own;
    }
    let kept = own;
    if (!kept && this.kept.length < KEPT_SEARCHES) this.kept.push((kept = { token: votes.token, version: -1, held: false, used: 0, images: [] }));
    kept ??= this.kept.reduce((oldest, k) => (k.used < oldest.used ? k : oldest));
    for (const image of kept.images.splice(probeImages)) image.log.release();
    while (kept.images.length < probeImages) kept.images.push({ log: new KernelArray(VOTE_BYTES), count: 0 });
    // Votes kept and never resumed (the search ended in its first pass) are dropped with the count.
    for (const image of kept.images) image.count = 0;
    kept.held = false;
    kept.version = this.version;
    return kept;
  }

  /**
   * Every probe image's lookups, scanned in word order: a word several lookups share (the same keypoint in another frame
   * or view, another probe image) has its list read once from memory and again from the cache, where lookup order would
   * read it again from memory for each (the scan is bound by memory). Each lookup's votes go to the staging log in one
   * run, `starts` and `counts` by lookup (the probe images' lookups numbered one after another), so that each image's
   * log can be laid out in lookup order afterwards (`gatherVotes`): the votes of the scan in lookup order, bit for bit.
   * Each lookup carries the stamp of its probe keypoint, numbered in lookup order as before.
   */
  private scanInWordOrder(probe: readonly ProbeLookups[], idf: Float32Array): ScannedLookups {
    const { heads, lengths } = this;
    const total = probe.reduce((n, lookups) => n + lookups.count, 0);
    if (total >= LOOKUP_LIMIT) throw new Error(`a search makes at most ${LOOKUP_LIMIT} lookups`);
    const image = new Uint16Array(total);
    const stamps = new Int32Array(total);
    const order = new Float64Array(total);
    const stopAbove = this.stopWordLength();
    const firsts: number[] = [];
    let scanned = 0;
    let g = 0;
    probe.forEach((lookups, i) => {
      firsts.push(g);
      let stamp = this.stamp;
      for (let k = 0; k < lookups.count; k++, g++) {
        // A new stamp for each probe keypoint: an enrolled image takes one vote of its lookups (counted by the kernel's `finish`).
        if (k === 0 || lookups.keypoint[k] !== lookups.keypoint[k - 1]) stamp = ++this.stamp;
        image[g] = i;
        stamps[g] = stamp;
        const word = lookups.words[k];
        if (heads[word] !== 0 && lengths[word] <= stopAbove) order[scanned++] = word * LOOKUP_LIMIT + g;
      }
    });
    const sorted = order.subarray(0, scanned).sort();
    const batch: LookupBatch = {
      size: scanned,
      heads: new Int32Array(scanned),
      lengths: new Int32Array(scanned),
      signatures: new Uint32Array(2 * scanned),
      angles: new Uint8Array(scanned),
      weights: new Float64Array(scanned),
      stampKeys: new Int32Array(scanned),
    };
    const lookupAt = new Int32Array(scanned);
    sorted.forEach((entry, k) => {
      const word = Math.floor(entry / LOOKUP_LIMIT);
      const at = entry - word * LOOKUP_LIMIT;
      const lookups = probe[image[at]];
      const i = at - firsts[image[at]];
      lookupAt[k] = at;
      batch.heads[k] = heads[word];
      batch.lengths[k] = lengths[word];
      batch.signatures[2 * k] = lookups.signatures[i * 2];
      batch.signatures[2 * k + 1] = lookups.signatures[i * 2 + 1];
      batch.angles[k] = lookups.angles[i];
      batch.weights[k] = idf[word] * lookups.weights[i];
      batch.stampKeys[k] = stamps[at] << BINS_LOG2;
    });
    const starts = new Int32Array(total);
    const counts = new Int32Array(total);
    const votes = new Int32Array(scanned);
    const log = this.scanLog;
    let count = 0;
    for (let k = 0; k < scanned; ) {
      // Room for a vote a posting of the next lookup at least (the log doubles, keeping its votes).
      if (log.capacity < count + batch.lengths[k]) log.ensure(Math.max(2 * log.capacity, count + batch.lengths[k]), true);
      const stop = scanLookups(batch, k, HAMMING_THRESHOLD, ANGLE_SHIFT, log.address, log.capacity, count, votes);
      if (stop === k) throw new Error("the first stage's scan made no progress");
      for (; k < stop; k++) {
        starts[lookupAt[k]] = count;
        counts[lookupAt[k]] = votes[k];
        count += votes[k];
      }
    }
    return { firsts, starts, counts };
  }

  /**
   * Probe image `i`'s votes from the staging log into its log in lookup order, after the `count` it holds; returns the
   * new count.
   */
  private gatherVotes(scan: ScannedLookups, i: number, lookupCount: number, log: KernelArray, count: number): number {
    const first = scan.firsts[i];
    let votes = 0;
    for (let k = 0; k < lookupCount; k++) votes += scan.counts[first + k];
    if (log.capacity < count + votes) log.ensure(Math.max(2 * log.capacity, count + votes), true);
    const { u8 } = kernelViews();
    const from = this.scanLog.address;
    for (let k = 0; k < lookupCount; k++) {
      const n = scan.counts[first + k];
      if (n === 0) continue;
      const start = from + scan.starts[first + k] * VOTE_BYTES;
      u8.copyWithin(log.address + count * VOTE_BYTES, start, start + n * VOTE_BYTES);
      count += n;
    }
    return count;
  }

  /**
   * Votes of probe image `i` (scanned by `scanInWordOrder`); each pet's score (its two best images) goes into its two best
   * probe-image scores. With `into`, the votes go to a kept image's log: after those it holds (`resume`), and kept
   * afterwards (`keep`).
   */
  private scoreProbeImage(scan: ScannedLookups, i: number, lookups: ProbeLookups, scored: number[], into?: KeptImage, votes?: VoteKeeping): void {
    const { rowPet, petImages } = this;
    const log = into?.log ?? this.log;
    const count = this.gatherVotes(scan, i, lookups.count, log, into && votes?.resume ? into.count : 0);
    if (this.sorted.capacity < count) {
      this.sorted.release();
      this.sorted.ensure(Math.max(count, log.capacity), false);
    }
    const windows = Math.ceil(this.rowCount / WINDOW_ROWS);
    const pets = finishProbeImage(
      log.address,
      count,
      this.sorted.address,
      this.cursors.address,
      windows,
      WINDOW_SHIFT,
      this.windowHistograms.address,
      this.windowFlags.address,
      this.windowRows.address,
      BINS_LOG2,
      rowPet.address,
      this.petBest.address,
      this.petTouched.address,
    );
    if (into) into.count = count;
    const { i32, f64 } = kernelViews();
    const petTouched = this.petTouched.address >>> 2;
    const petBest = this.petBest.address >>> 3;
    const { bestProbe, secondProbe } = this;
    for (let k = 0; k < pets; k++) {
      const pet = i32[petTouched + k];
      const score = (f64[petBest + 2 * pet] + f64[petBest + 2 * pet + 1]) / Math.min(2, petImages[pet]);
      f64[petBest + 2 * pet] = f64[petBest + 2 * pet + 1] = 0;
      const best = bestProbe[pet];
      if (best === 0) scored.push(pet);
      if (score > best) {
        secondProbe[pet] = best;
        bestProbe[pet] = score;
      } else if (score > secondProbe[pet]) {
        secondProbe[pet] = score;
      }
    }
  }

  /** Lists longer than this are stop words (parameters.ts, STOP_WORD_FACTOR). */
  private stopWordLength(): number {
    return Math.max(STOP_WORD_MIN_POSTINGS, (STOP_WORD_FACTOR * (this.livePostings + this.deadPostings)) / VOCABULARY_WORDS);
  }

  /** Squared inverse document frequency of each word, from the current posting counts. */
  private idfSquared(): Float32Array {
    const total = this.livePostings + this.deadPostings + 1;
    return Float32Array.from(this.lengths, (length) => Math.log(total / (length + 1)) ** 2);
  }

  /** The word's tail block with room for one more posting (a new block when it is full), and the memory views valid after it. */
  private tailWithRoom(word: number): { block: number; views: KernelViews } {
    const block = this.tails[word];
    const views = kernelViews();
    if (block !== 0 && countOf(views, block) < capacityOf(views, block)) return { block, views };
    const next = this.newBlock(word);
    return { block: next, views: kernelViews() };
  }

  /** Links a new, empty block at the end of a word's list: the first holds FIRST_BLOCK postings, each next one twice the last's. */
  private newBlock(word: number): number {
    const block = this.tails[word];
    const capacity = block === 0 ? FIRST_BLOCK : Math.min(LAST_BLOCK, capacityOf(kernelViews(), block) * 2);
    const next = kernelHeap.alloc(blockBytes(capacity));
    this.blockBytes += blockBytes(capacity);
    const views = kernelViews();
    views.u16[(next + CAPACITY_FIELD) >>> 1] = capacity;
    if (block === 0) this.heads[word] = next;
    else views.i32[block >>> 2] = next;
    this.tails[word] = next;
    return next;
  }

  private push(word: number, row: number, low: number, high: number, angle: number): void {
    const { block, views } = this.tailWithRoom(word);
    const count = countOf(views, block);
    const capacity = capacityOf(views, block);
    views.u32[signatureAt(block, count)] = low;
    views.u32[signatureAt(block, count) + 1] = high;
    views.i32[rowAt(block, capacity, count)] = row;
    views.u8[angleAt(block, capacity, count)] = angle;
    views.u16[(block + COUNT_FIELD) >>> 1] = count + 1;
    this.lengths[word]++;
  }

  /** Frees a word's blocks and empties its list. */
  private freeList(word: number): void {
    for (let block = this.heads[word]; block !== 0; ) block = this.freeBlock(block);
    this.heads[word] = this.tails[word] = this.lengths[word] = 0;
  }

  /** Returns a block to the heap; resolves the block that followed it. */
  private freeBlock(block: number): number {
    const views = kernelViews();
    const next = nextOf(views, block);
    const bytes = blockBytes(capacityOf(views, block));
    kernelHeap.free(block, bytes);
    this.blockBytes -= bytes;
    return next;
  }

  private newRow(pet: number, postings: number): number {
    if (this.rowCount === this.rowPostings.length) {
      const grown = new Int32Array(this.rowPostings.length * 2);
      grown.set(this.rowPostings);
      this.rowPostings = grown;
    }
    this.rowPet.ensure(this.rowPostings.length, true);
    kernelViews().i32[(this.rowPet.address >>> 2) + this.rowCount] = pet;
    this.rowPostings[this.rowCount] = postings;
    return this.rowCount++;
  }

  /** Sizes the per-search scratch to the rows and pets; a search that resumes kept votes keeps their stamps' count. */
  private ensureScratch(resuming: boolean): void {
    const windows = Math.ceil(this.rowPet.capacity / WINDOW_ROWS);
    if (this.cursors.capacity < windows) this.cursors.ensure(windows, false);
    if (this.windowRows.capacity === 0) {
      // Fresh regions are zeroed: the flags start (and the kernel leaves them) clear.
      this.windowHistograms.ensure(WINDOW_ROWS, false);
      this.windowFlags.ensure(WINDOW_ROWS, false);
      this.windowRows.ensure(WINDOW_ROWS, false);
    }
    const pets = Math.max(1, this.petIds.length);
    if (this.petBest.capacity < pets) {
      const capacity = Math.max(1024, pets * 2);
      this.petBest.ensure(capacity, false);
      this.petTouched.ensure(capacity, false);
      this.bestProbe = new Float64Array(capacity);
      this.secondProbe = new Float64Array(capacity);
    }
    if (this.stamp > STAMP_LIMIT && !resuming) {
      // Kept votes carry stamps of the old count: they are no longer resumable.
      this.stamp = 0;
      this.version++;
    }
  }

  private compact(): void {
    const newRow = new Int32Array(this.rowCount).fill(-1);
    let next = 0;
    let views = kernelViews();
    const rowPet = this.rowPet.address >>> 2;
    for (let row = 0; row < this.rowCount; row++) if (views.i32[rowPet + row] >= 0) newRow[row] = next++;
    for (let word = 0; word < VOCABULARY_WORDS; word++) {
      let block = this.heads[word];
      this.heads[word] = this.tails[word] = this.lengths[word] = 0;
      while (block !== 0) {
        views = kernelViews();
        const count = countOf(views, block);
        const capacity = capacityOf(views, block);
        for (let j = 0; j < count; j++) {
          // A push may grow the memory, which replaces the views.
          views = kernelViews();
          const row = newRow[views.i32[rowAt(block, capacity, j)]];
          if (row < 0) continue;
          const signature = signatureAt(block, j);
          this.push(word, row, views.u32[signature], views.u32[signature + 1], views.u8[angleAt(block, capacity, j)]);
        }
        // Freed only once read: the pushes above may take the freed block of the same size.
        block = this.freeBlock(block);
      }
    }
    const rowPostings = new Int32Array(Math.max(1024, next));
    const pets = new Int32Array(next);
    views = kernelViews();
    for (let row = 0; row < this.rowCount; row++) {
      if (newRow[row] < 0) continue;
      rowPostings[newRow[row]] = this.rowPostings[row];
      pets[newRow[row]] = views.i32[rowPet + row];
    }
    this.rowPet.release();
    this.rowPet.ensure(rowPostings.length, false);
    kernelViews().i32.set(pets, this.rowPet.address >>> 2);
    for (const rows of this.petRows) if (rows) rows.forEach((row, i) => (rows[i] = newRow[row]));
    this.rowPostings = rowPostings;
    this.rowCount = next;
    this.livePostings = this.lengths.reduce((sum, length) => sum + length, 0);
    this.deadPostings = 0;
    for (const array of this.scratchArrays()) array.release();
  }
}

/** Whether a pet of `score` and `petId` ranks before `other` (ties by pet id, for determinism). */
function ranksBefore(score: number, petId: string, other: PetScore): boolean {
  return score > other.score || (score === other.score && petId < other.petId);
}

/**
 * Keeps `ranked` the `limit` best scores, best first. Called for every pet a search scored (tens of thousands), so a pet
 * that does not make the list costs one comparison and no allocation.
 */
function insertRanked(ranked: PetScore[], petId: string, score: number, limit: number): void {
  if (ranked.length === limit && !ranksBefore(score, petId, ranked[limit - 1])) return;
  let at = ranked.length;
  while (at > 0 && ranksBefore(score, petId, ranked[at - 1])) at--;
  ranked.splice(at, 0, { petId, score });
  if (ranked.length > limit) ranked.pop();
}
