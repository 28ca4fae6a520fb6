import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "@/lib/db/connect";
import { ENGINE_VERSION } from "@/lib/engine";
import { openTestDatabase } from "@/lab/test-support/database";
import { enrolledLightTemplatesByPet, enrolledTemplatesByPet, usableProbeTurns } from "./templates";

// 1:N reads many pets' templates at once (a deep pass: 368 pets' light templates): every pet asked for, its images in
// enrolment order (not id order), no other account's.

let open: OpenDatabase;
let close: () => Promise<void>;
let accountId: string;
const PETS = 40;
const IMAGES = 3;
/** Distinct bytes for image `i` of pet `p` (no real template: rows of this engine version are read as stored). */
const bytes = (kind: number, p: number, i: number) => Buffer.from([kind, p, i, 7, 7, 7]);

beforeAll(async () => {
  ({ open, close } = await openTestDatabase("pglite", "template_reads"));
  const db = open.prisma;
  accountId = (await db.account.create({ data: { name: "Reads clinic" } })).id;
  const other = (await db.account.create({ data: { name: "Other clinic" } })).id;
  for (const account of [accountId, other]) {
    const session = await db.captureSession.create({
      data: { accountId: account, purpose: "PET_PROFILE_REGISTRATION", species: "DOG", expiresAt: new Date(Date.now() + 3600_000) },
    });
    for (let p = 0; p < PETS; p++) {
      const pet = await db.pet.create({ data: { id: `${account === accountId ? "pet" : "other"}-${String(p).padStart(2, "0")}`, accountId: account, species: "DOG" } });
      await db.fingerprintImage.createMany({
        // Enrolled in reverse id order, so that enrolment order and id order differ.
        data: Array.from({ length: IMAGES }, (_, i) => ({
          id: `${pet.id}-img-${IMAGES - i}`,
          accountId: account,
          sessionId: session.id,
          petId: pet.id,
          filePath: "images/none.jpg",
          byteSize: 0,
          usable: true,
          template: bytes(1, p, i),
          lightTemplate: bytes(2, p, i),
          engineVersion: ENGINE_VERSION,
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, p, i)),
        })),
      });
    }
  }
}, 120_000);

afterAll(async () => {
  await close?.();
});

const hex = (parts: Uint8Array[] | undefined) => (parts ?? []).map((part) => Buffer.from(part).toString("hex"));

describe("templates read for 1:N", () => {
  it.each([
    ["whole templates", enrolledTemplatesByPet, 1],
    ["light templates", enrolledLightTemplatesByPet, 2],
  ] as const)("%s: every pet asked for, in enrolment order", async (_, read, kind) => {
    const wanted = Array.from({ length: PETS }, (_, p) => p).filter((p) => p % 7 !== 3);
    const answer = await read(open.prisma, accountId, wanted.map((p) => `pet-${String(p).padStart(2, "0")}`));
    expect([...answer.keys()].sort()).toEqual(wanted.map((p) => `pet-${String(p).padStart(2, "0")}`));
    for (const p of wanted) {
      expect(hex(answer.get(`pet-${String(p).padStart(2, "0")}`))).toEqual(hex(Array.from({ length: IMAGES }, (_, i) => bytes(kind, p, i))));
    }
    // Another account's pets are not read, even by their ids.
    expect((await read(open.prisma, accountId, ["other-00", "other-01"])).size).toBe(0);
    expect(await read(open.prisma, accountId, [])).toEqual(new Map());
  });
});

describe("a 1:N probe's turned views", () => {
  it("are the views its upload stored, and the stored JPEG only for an image without them, in the usable images' order", async () => {
    const row = (id: string, turnedViews: Uint8Array | null, usable = true) => ({
      id,
      filePath: `images/no-such-account/no-such-session/fingerprint-${id}.jpg`,
      usable,
      template: Buffer.from([1]),
      engineVersion: ENGINE_VERSION,
      quality: null,
      turnedViews,
    });
    const unread: string[] = [];
    const turns = await usableProbeTurns(
      [row("a", Buffer.from([9, 1])), row("refused", Buffer.from([9, 2]), false), row("b", null), row("c", Buffer.from([9, 3]))],
      (_, image) => unread.push(image.id),
    );
    // Only the image without views is read; its file is missing, so it is reported and searched upright only.
    expect(unread).toEqual(["b"]);
    expect(turns).toEqual([{ views: Buffer.from([9, 1]) }, { jpeg: new Uint8Array(0) }, { views: Buffer.from([9, 3]) }]);
  });
});
