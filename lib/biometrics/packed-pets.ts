import { isSearchKey, searchKeyLengthAt } from "./search-key";
import { searchKeyOfTemplate } from "./template";
import { VOCABULARY_FORMAT } from "./visual-words";

/**
 * Pets and their images' search keys in one buffer: the form a gallery load reads from the database and hands, one
 * buffer a shard, to the engine threads (moved, not copied: `galleryUpsertPets`), which index it straight from these
 * bytes. Pet i's keys are `bytes[ends[i - 1] .. ends[i])` (from 0 for the first), each after its byte length (4 bytes,
 * big-endian, as PostgreSQL's `int4send` writes it: gallery-rows.ts packs them in SQL). A pet with no keys is removed.
 */
export interface PackedPets {
  petIds: string[];
  ends: Uint32Array;
  bytes: Uint8Array;
}

const LENGTH_BYTES = 4;

/** Builds a PackedPets a pet at a time, growing its buffer as it goes. */
export class PackedPetsWriter {
  private buffer: Buffer;
  private at = 0;
  private readonly petIds: string[] = [];
  private readonly ends: number[] = [];

  constructor(expectedBytes = 0) {
    this.buffer = Buffer.allocUnsafeSlow(Math.max(64, expectedBytes));
  }

  /** A pet whose keys come packed already (a database row's): as bytes, or in base64, decoded in place. */
  addPacked(petId: string, packed: Uint8Array | string | null): void {
    if (typeof packed === "string") {
      this.ensure(Buffer.byteLength(packed, "base64"));
      this.at += this.buffer.write(packed, this.at, "base64");
    } else if (packed) {
      this.ensure(packed.byteLength);
      this.buffer.set(packed, this.at);
      this.at += packed.byteLength;
    }
    this.endPet(petId);
  }

  /** A pet with its images, each a search key or a whole template (its search key is cut from it). */
  add(petId: string, images: readonly Uint8Array[]): void {
    for (const image of images) {
      const key = isSearchKey(image) ? image : searchKeyOfTemplate(image);
      this.ensure(LENGTH_BYTES + key.byteLength);
      this.buffer.writeUInt32BE(key.byteLength, this.at);
      this.buffer.set(key, this.at + LENGTH_BYTES);
      this.at += LENGTH_BYTES + key.byteLength;
    }
    this.endPet(petId);
  }

  finish(): PackedPets {
    return { petIds: this.petIds, ends: Uint32Array.from(this.ends), bytes: this.buffer.subarray(0, this.at) };
  }

  private endPet(petId: string): void {
    this.petIds.push(petId);
    this.ends.push(this.at);
  }

  private ensure(bytes: number): void {
    if (this.at + bytes <= this.buffer.byteLength) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.at + bytes, this.buffer.byteLength * 2));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}

/** A batch of pets already dealt to a gallery's shards (ShardedPetsWriter): shard i's pets are `shards[i]`. */
export interface ShardedPets {
  shards: PackedPets[];
}

/**
 * Builds a batch dealt to shards as it is written: each pet straight into its shard's buffer (sized by `sizes`, grown
 * if need be), so that no buffer of the whole batch is made and copied again (splitPackedPets).
 */
export class ShardedPetsWriter {
  private readonly writers: PackedPetsWriter[];

  constructor(
    private readonly shardOf: (petId: string) => number,
    sizes: readonly number[],
  ) {
    this.writers = sizes.map((size) => new PackedPetsWriter(size));
  }

  addPacked(petId: string, packed: Uint8Array | string | null): void {
    this.writers[this.shardOf(petId)].addPacked(petId, packed);
  }

  add(petId: string, images: readonly Uint8Array[]): void {
    this.writers[this.shardOf(petId)].add(petId, images);
  }

  finish(): ShardedPets {
    return { shards: this.writers.map((writer) => writer.finish()) };
  }
}

/** How many pets a batch holds, dealt to shards or not. */
export function packedPetCount(pets: PackedPets | ShardedPets): number {
  return "shards" in pets ? pets.shards.reduce((sum, shard) => sum + shard.petIds.length, 0) : pets.petIds.length;
}

/** Pets with their images (search keys or whole templates), packed. */
export function packPets(pets: readonly { petId: string; templates: readonly Uint8Array[] }[]): PackedPets {
  const writer = new PackedPetsWriter();
  for (const pet of pets) writer.add(pet.petId, pet.templates);
  return writer.finish();
}

/** Pet i's byte range in `batch.bytes`. */
export function petRange(batch: PackedPets, pet: number): { start: number; end: number } {
  return { start: pet === 0 ? 0 : batch.ends[pet - 1], end: batch.ends[pet] };
}

/**
 * The batch's pets dealt to `shards` shards by `shardOf`, each shard's in a buffer of its own (a fresh ArrayBuffer,
 * which the caller may transfer to another thread).
 */
export function splitPackedPets(batch: PackedPets, shards: number, shardOf: (petId: string) => number): PackedPets[] {
  const owners = batch.petIds.map(shardOf);
  const sizes = new Array<number>(shards).fill(0);
  owners.forEach((shard, pet) => {
    const { start, end } = petRange(batch, pet);
    sizes[shard] += end - start;
  });
  const parts = sizes.map((size) => ({ petIds: [] as string[], ends: [] as number[], bytes: new Uint8Array(size), at: 0 }));
  owners.forEach((shard, pet) => {
    const { start, end } = petRange(batch, pet);
    const part = parts[shard];
    part.bytes.set(batch.bytes.subarray(start, end), part.at);
    part.at += end - start;
    part.petIds.push(batch.petIds[pet]);
    part.ends.push(part.at);
  });
  return parts.map((part) => ({ petIds: part.petIds, ends: Uint32Array.from(part.ends), bytes: part.bytes }));
}

/**
 * Where each of pet i's search keys starts in `batch.bytes` (its header), each checked as deserializeSearchKey checks
 * one: the magic, the vocabulary, and a length that matches its count.
 */
export function keyOffsets(batch: PackedPets, pet: number): number[] {
  const { bytes } = batch;
  const { start, end } = petRange(batch, pet);
  if (end > bytes.byteLength) throw new RangeError("packed pets end past their bytes");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const offsets: number[] = [];
  for (let at = start; at < end; ) {
    if (at + LENGTH_BYTES > end) throw new RangeError("packed search keys end inside a length");
    const length = view.getUint32(at);
    at += LENGTH_BYTES;
    if (at + length > end) throw new RangeError("packed search keys end inside a key");
    const key = bytes.subarray(at, at + length);
    if (searchKeyLengthAt(key) !== length) throw new RangeError("search key length does not match its header");
    if (view.getUint16(at + 4, true) !== VOCABULARY_FORMAT) throw new RangeError("search key from another vocabulary");
    offsets.push(at);
    at += length;
  }
  return offsets;
}

/** Pet i's search keys, as views of the batch's bytes. */
export function packedKeys(batch: PackedPets, pet: number): Uint8Array[] {
  return keyOffsets(batch, pet).map((at) => batch.bytes.subarray(at, at + searchKeyLengthAt(batch.bytes.subarray(at))));
}
