import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMoto, type MotoServer } from "@/lab/test-support/moto";
import type { Db } from "@/lib/db/connect";
import { DiskImageStore, imageRelativePath, imageStoreFromUrl, type ImageStore } from "./images";
import { sweepOrphanImages } from "./orphan-sweep";

// The one storage interface, against the disk and against a real S3-compatible server (moto).

const key = imageRelativePath("acc-1", "sess-1", "fingerprint", "img-1");
const other = imageRelativePath("acc-1", "sess-1", "appearance", "img-2");
const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 250]);

function behavesAsAnImageStore(name: string, store: () => ImageStore) {
  describe(name, () => {
    it("reads back what it wrote, byte for byte", async () => {
      await store().write(key, bytes);
      expect(Buffer.from(await store().read(key)).equals(Buffer.from(bytes))).toBe(true);
    });

    it("overwrites a key and fails to read a missing one", async () => {
      await store().write(key, new Uint8Array([9, 9]));
      expect([...(await store().read(key))]).toEqual([9, 9]);
      await expect(store().read(imageRelativePath("acc-1", "sess-1", "fingerprint", "never-written"))).rejects.toThrow();
    });

    it("removes only the given keys, and a missing key is not an error", async () => {
      await store().write(key, bytes);
      await store().write(other, bytes);
      await store().remove([key, imageRelativePath("acc-1", "gone", "fingerprint", "x")]);
      await expect(store().read(key)).rejects.toThrow();
      expect((await store().read(other)).byteLength).toBe(bytes.byteLength);
      await store().remove([other]);
      await expect(store().read(other)).rejects.toThrow();
    });

    it("lists its images, and the orphan sweep removes those no row names once past the grace period", async () => {
      const kept = imageRelativePath("acc-a", "sess-1", "fingerprint", "kept");
      const orphans = [imageRelativePath("acc-a", "sess-1", "fingerprint", "orphan"), imageRelativePath("acc-b", "sess-2", "appearance", "orphan")];
      for (const k of [kept, ...orphans]) await store().write(k, bytes);
      const listed: string[] = [];
      for await (const image of store().list()) listed.push(image.key);
      expect(listed.sort()).toEqual([kept, ...orphans].sort());
      // The rows of each account, as the sweep queries them (only `kept` has one).
      const rows = (args: { where: { accountId: string } }) => Promise.resolve(args.where.accountId === "acc-a" ? [{ filePath: kept }] : []);
      const db = { fingerprintImage: { findMany: rows }, appearanceImage: { findMany: rows } } as unknown as Db;
      expect(await sweepOrphanImages(db, store(), { graceMs: 60_000 })).toEqual({ scanned: 3, removed: 0 });
      expect(await sweepOrphanImages(db, store(), { graceMs: 0 })).toEqual({ scanned: 3, removed: 2 });
      expect((await store().read(kept)).byteLength).toBe(bytes.byteLength);
      for (const k of orphans) await expect(store().read(k)).rejects.toThrow();
      await store().remove([kept]);
    });
  });
}

let dir: string;
let moto: MotoServer;
let s3: ImageStore;
const savedEnv = { ...process.env };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-scale-storage-"));
  moto = await startMoto();
  Object.assign(process.env, moto.env);
  await moto.createBucket("rhinarium-scale");
  s3 = imageStoreFromUrl(moto.storageUrl("rhinarium-scale", "tenant-a"), dir);
});

afterAll(async () => {
  process.env = savedEnv;
  await moto?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

behavesAsAnImageStore("disk store", () => new DiskImageStore(dir));
behavesAsAnImageStore("S3 store (moto_server)", () => s3);

describe("where each store puts images", () => {
  it("disk: under the data folder, removing the session folder it empties", async () => {
    const store = new DiskImageStore(dir);
    await store.write(key, bytes);
    expect(fs.existsSync(path.join(dir, "images", "acc-1", "sess-1", "fingerprint-img-1.jpg"))).toBe(true);
    await store.remove([key]);
    expect(fs.existsSync(path.join(dir, "images", "acc-1", "sess-1"))).toBe(false);
    await expect(store.read("../outside.jpg")).rejects.toThrow(/outside the data folder/);
  });

  it("S3: under the URL's prefix in the bucket, and nothing on disk", async () => {
    await s3.write(key, bytes);
    const client = new S3Client({ endpoint: moto.endpoint, region: "us-east-1", forcePathStyle: true });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: "rhinarium-scale" }));
    client.destroy();
    expect(listed.Contents?.map((o) => o.Key)).toContain(`tenant-a/${key}`);
    expect(fs.existsSync(path.join(dir, key))).toBe(false);
  });

  it("refuses credentials in the URL and a URL that is not s3://", () => {
    expect(() => imageStoreFromUrl("s3://key:secret@bucket", dir)).toThrow(/credentials/);
    expect(() => imageStoreFromUrl("http://bucket", dir)).toThrow(/s3:\/\//);
  });
});
