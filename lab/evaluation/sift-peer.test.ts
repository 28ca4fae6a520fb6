import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSiftPeer } from "./sift-peer";

// The first run may apt-get install python3-opencv.
const INSTALL_TIMEOUT_MS = 300_000;
const SIZE = 240;

/** Deterministic blob texture: SIFT needs corners and blobs, which flat noise after JPEG lacks. */
function blobSvg(seed: number): string {
  let state = seed;
  const random = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const circles = Array.from({ length: 120 }, () => {
    const gray = Math.floor(random() * 256);
    return `<circle cx="${random() * SIZE}" cy="${random() * SIZE}" r="${3 + random() * 11}" fill="rgb(${gray},${gray},${gray})"/>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}"><rect width="${SIZE}" height="${SIZE}" fill="#808080"/>${circles.join("")}</svg>`;
}

describe("runSiftPeer", () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "sift-peer-"));
    const nose = sharp(Buffer.from(blobSvg(1)));
    await nose.clone().jpeg().toFile(path.join(root, "nose.jpg"));
    // Same nose re-photographed: rotated and rescaled.
    const turned = await nose.clone().rotate(15, { background: "#808080" }).png().toBuffer();
    await sharp(turned).resize(260).jpeg().toFile(path.join(root, "nose turned.jpg"));
    await sharp(Buffer.from(blobSvg(2))).jpeg().toFile(path.join(root, "other.jpg"));
    await writeFile(path.join(root, "broken.jpg"), "not a jpeg");
    await writeFile(
      path.join(root, "pairs.csv"),
      'label,a,b\r\ngenuine,nose.jpg,"nose turned.jpg"\r\nimpostor,nose.jpg,other.jpg\r\nbad,nose.jpg,broken.jpg\r\nbad,missing.jpg,nose.jpg\r\n',
    );
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it(
    "scores pairs by RANSAC inliers, 0 for unreadable images, and reports timings",
    async () => {
      const { scores, timings } = await runSiftPeer({ pairsCsv: path.join(root, "pairs.csv"), root });
      expect(scores.map(({ a, b }) => [a, b])).toEqual([
        ["nose.jpg", "nose turned.jpg"],
        ["nose.jpg", "other.jpg"],
        ["nose.jpg", "broken.jpg"],
        ["missing.jpg", "nose.jpg"],
      ]);
      const [genuine, impostor, broken, missing] = scores.map((s) => s.score);
      expect(genuine).toBeGreaterThan(30);
      expect(impostor).toBeLessThan(genuine / 3);
      expect(broken).toBe(0);
      expect(missing).toBe(0);
      expect(timings).toMatchObject({ images: 5, pairs: 4, tooFewKeypointsImages: [] });
      expect(timings.unreadableImages.sort()).toEqual(["broken.jpg", "missing.jpg"]);
      expect(timings.extractMsPerImage).toBeGreaterThan(0);
      expect(timings.extractCpuMsPerImage).toBeGreaterThan(0);
      expect(timings.compareCpuMsPerPair).toBeGreaterThan(0);
      expect(timings.threads).toBeGreaterThanOrEqual(1);
      expect(timings.totalMs).toBeGreaterThanOrEqual(timings.extractMs + timings.compareMs);
    },
    INSTALL_TIMEOUT_MS,
  );
});
