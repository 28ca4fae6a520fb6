import { describe, expect, it } from "vitest";
import { prng } from "@/lab/test-support/nose-images";
import { keyOffsets, packedKeys, packedPetCount, packPets, PackedPetsWriter, ShardedPetsWriter, splitPackedPets } from "./packed-pets";
import { serializeSearchKey } from "./search-key";
import { VOCABULARY_WORDS } from "./parameters";

function keyBytes(seed: number, count = 30): Uint8Array {
  const rand = prng(seed);
  return serializeSearchKey({
    words: Uint16Array.from({ length: count }, () => Math.floor(rand() * VOCABULARY_WORDS)),
    signatures: Uint32Array.from({ length: count * 2 }, () => Math.floor(rand() * 0x1_0000_0000)),
    angles: Uint8Array.from({ length: count }, () => Math.floor(rand() * 256)),
  });
}

const hex = (keys: Uint8Array[]) => keys.map((key) => Buffer.from(key).toString("hex"));

/** Each key after its 4-byte big-endian length, as the database packs a pet's keys. */
function databasePacking(keys: Uint8Array[]): Buffer {
  return Buffer.concat(
    keys.flatMap((key) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(key.byteLength);
      return [length, key];
    }),
  );
}

describe("packed pets", () => {
  it("hold each pet's keys in order, whether added as keys, as the database's packed bytes or as its base64 (with its line breaks)", () => {
    const a = [keyBytes(1), keyBytes(2, 7)];
    const b = [keyBytes(3)];
    const d = [keyBytes(4), keyBytes(5)];
    // A first buffer too small for the batch: it grows by the packed bytes' length.
    const writer = new PackedPetsWriter(8);
    writer.add("pet-a", a);
    // PostgreSQL's encode(..., 'base64') breaks its lines every 76 characters.
    writer.addPacked("pet-b", databasePacking(b).toString("base64").replace(/(.{76})/g, "$1\n"));
    writer.addPacked("pet-none", null);
    writer.add("pet-c", []);
    writer.addPacked("pet-d", new Uint8Array(databasePacking(d)));
    const batch = writer.finish();
    expect(batch.petIds).toEqual(["pet-a", "pet-b", "pet-none", "pet-c", "pet-d"]);
    expect([0, 1, 2, 3, 4].map((pet) => hex(packedKeys(batch, pet)))).toEqual([hex(a), hex(b), [], [], hex(d)]);
  });

  it("split into shards, each in a buffer of its own, every pet's keys unchanged", () => {
    const pets = Array.from({ length: 9 }, (_, p) => ({ petId: `pet-${p}`, templates: Array.from({ length: p % 3 }, (_, k) => keyBytes(p * 10 + k)) }));
    const shares = splitPackedPets(packPets(pets), 3, (petId) => Number(petId.slice(4)) % 3);
    expect(shares.map((share) => share.petIds)).toEqual([0, 1, 2].map((shard) => pets.filter((_, p) => p % 3 === shard).map((pet) => pet.petId)));
    for (const share of shares) {
      expect(share.bytes.byteOffset).toBe(0);
      expect(share.bytes.byteLength).toBe(share.bytes.buffer.byteLength);
      share.petIds.forEach((petId, i) => expect(hex(packedKeys(share, i))).toEqual(hex(pets[Number(petId.slice(4))].templates)));
    }
  });

  it("written dealt to shards, each shard's pets as the whole batch split would give them, buffers grown past their sizes", () => {
    const pets = Array.from({ length: 9 }, (_, p) => ({ petId: `pet-${p}`, templates: Array.from({ length: p % 3 }, (_, k) => keyBytes(p * 10 + k)) }));
    const shardOf = (petId: string) => Number(petId.slice(4)) % 3;
    // Shard 1 sized too small, shard 2 sized right, shard 0 not sized.
    const writer = new ShardedPetsWriter(shardOf, [0, 10, splitPackedPets(packPets(pets), 3, shardOf)[2].bytes.byteLength]);
    pets.forEach((pet, p) => (p % 2 ? writer.add(pet.petId, pet.templates) : writer.addPacked(pet.petId, new Uint8Array(databasePacking(pet.templates)))));
    const { shards } = writer.finish();
    const split = splitPackedPets(packPets(pets), 3, shardOf);
    expect(shards.map((shard) => shard.petIds)).toEqual(split.map((share) => share.petIds));
    shards.forEach((shard, s) => {
      expect(Buffer.from(shard.bytes).equals(Buffer.from(split[s].bytes))).toBe(true);
      expect([...shard.ends]).toEqual([...split[s].ends]);
    });
    expect(packedPetCount({ shards })).toBe(9);
    expect(packedPetCount(packPets(pets))).toBe(9);
  });

  it("refuse a truncated batch, a key whose length disagrees with its header, and a key of another vocabulary", () => {
    const batch = packPets([{ petId: "pet", templates: [keyBytes(5)] }]);
    const truncated = { ...batch, bytes: batch.bytes.subarray(0, batch.bytes.byteLength - 1) };
    expect(() => keyOffsets(truncated, 0)).toThrow(RangeError);
    expect(() => keyOffsets({ ...truncated, ends: Uint32Array.of(truncated.bytes.byteLength) }, 0)).toThrow(RangeError);
    const short = { ...batch, bytes: new Uint8Array(batch.bytes), ends: Uint32Array.of(3) };
    expect(() => keyOffsets(short, 0)).toThrow(RangeError);
    const lying = { ...batch, bytes: new Uint8Array(batch.bytes) };
    lying.bytes[4 + 7] += 1;
    expect(() => keyOffsets(lying, 0)).toThrow(RangeError);
    const foreign = { ...batch, bytes: new Uint8Array(batch.bytes) };
    foreign.bytes[4 + 4] ^= 0xff;
    expect(() => keyOffsets(foreign, 0)).toThrow(/vocabulary/);
  });
});
