import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";
import { recordAudit } from "@/lib/accounts/audit";
import { createPet, deletePet, getPetOrThrow, updatePet } from "@/lib/pets/pets";
import { breedSchema, metadataSchema, speciesSchema } from "@/lib/pets/schemas";
import { DECISION_THRESHOLD } from "@/lib/engine";
import { accountAction, type AccountActionContext } from "./action-client";
import { jobOutcome } from "./job-outcome";
import { petNoseMatches } from "./duplicate-noses";
import { changedPetFields } from "./pet-fields";
import type { PetListQuery, PetListRow } from "./pet-list-query";

// Pets in the dashboard: the table's server-side page, the pet page, and create/edit/delete through
// the same domain functions the API uses (lib/pets/pets.ts).

function petListWhere(accountId: string, query: PetListQuery): Prisma.PetWhereInput {
  const where: Prisma.PetWhereInput = { accountId };
  if (query.species !== "all") where.species = query.species;
  if (query.fingerprint === "yes") where.fingerprints = { some: {} };
  if (query.fingerprint === "no") where.fingerprints = { none: {} };
  if (query.q) {
    where.OR = [
      { id: { contains: query.q } },
      { breed: { contains: query.q, mode: "insensitive" } },
      { metadata: { contains: query.q, mode: "insensitive" } },
    ];
  }
  return where;
}

/** One page of the account's pets, with the total for the pager. */
export async function listPetsPage(db: Db, accountId: string, query: PetListQuery): Promise<{ rows: PetListRow[]; total: number }> {
  const where = petListWhere(accountId, query);
  const [rows, total] = await Promise.all([
    db.pet.findMany({
      where,
      orderBy: [query.sort === "breed" ? { breed: { sort: query.dir, nulls: "last" } } : { [query.sort]: query.dir }, { id: "asc" }],
      skip: (query.page - 1) * query.size,
      take: query.size,
      select: { id: true, species: true, breed: true, metadata: true, createdAt: true, _count: { select: { fingerprints: true } } },
    }),
    db.pet.count({ where }),
  ]);
  return {
    total,
    rows: rows.map((r) => ({ id: r.id, species: r.species, breed: r.breed, metadata: r.metadata, enrolledImages: r._count.fingerprints, createdAt: r.createdAt.toISOString() })),
  };
}

export interface ImageQuality {
  usable: boolean;
  /** 0-100, the engine's quality score; null when the engine rejected the image outright. */
  score: number | null;
  reasons: string[];
}

/** The quality fields the UI shows, from the engine's stored report. */
export function qualityOf(row: { usable: boolean; quality: unknown }): ImageQuality {
  const q = (row.quality ?? {}) as { score?: number; reasons?: string[]; rejection?: { message?: string } };
  return {
    usable: row.usable,
    score: typeof q.score === "number" ? Math.round(q.score * 100) / 100 : null,
    reasons: Array.isArray(q.reasons) ? q.reasons : q.rejection?.message ? [q.rejection.message] : [],
  };
}

/** The pet page: details, enrolled nose images with quality, appearance photos, recent jobs, other pets with matching noses. */
export async function getPetDetail(db: Db, accountId: string, petId: string) {
  const pet = await getPetOrThrow(db, accountId, petId);
  const [fingerprints, appearances, jobs, noseMatches] = await Promise.all([
    db.fingerprintImage.findMany({ where: { accountId, petId }, select: { id: true, usable: true, quality: true }, orderBy: { createdAt: "asc" } }),
    db.appearanceImage.findMany({ where: { accountId, petId }, select: { id: true }, orderBy: { createdAt: "asc" } }),
    db.job.findMany({
      where: { accountId, petId },
      select: { id: true, kind: true, status: true, createdAt: true, result: true, failureReason: true },
      orderBy: { createdAt: "desc" },
      take: 10,
    }),
    petNoseMatches(db, accountId, petId),
  ]);
  return {
    pet,
    noseMatches,
    fingerprints: fingerprints.map((f) => ({ id: f.id, ...qualityOf(f) })),
    appearances,
    jobs: jobs.map((j) => ({ id: j.id, kind: j.kind, outcome: jobOutcome(j, DECISION_THRESHOLD), createdAt: j.createdAt.toISOString() })),
  };
}

const petIdSchema = z.string().min(1).max(100);

function audit(ctx: AccountActionContext, action: string, target: string, data: Prisma.InputJsonValue = {}) {
  return recordAudit(ctx.db, { kind: "user", userId: ctx.user.id, email: ctx.user.email }, { action, accountId: ctx.accountId, target, data });
}

/** Empty text means "not given" (the API's null). */
const optionalText = <S extends z.ZodType<string>>(schema: S) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema.optional());

export const createPetAction = accountAction({
  capability: "pets:write",
  usesService: true,
  input: z.object({ species: speciesSchema, breed: optionalText(breedSchema), metadata: optionalText(metadataSchema) }),
  async run(ctx, input) {
    const account = await ctx.db.account.findUniqueOrThrow({ where: { id: ctx.accountId }, include: { plan: true } });
    const pet = await createPet(ctx.db, ctx.accountId, input, account.plan?.petLimit ?? null);
    await audit(ctx, "pet.create", pet.id, { species: input.species });
    return pet;
  },
});

export const updatePetAction = accountAction({
  capability: "pets:write",
  usesService: true,
  input: z.object({ petId: petIdSchema, metadata: metadataSchema, breed: breedSchema }),
  async run(ctx, input) {
    const before = await getPetOrThrow(ctx.db, ctx.accountId, input.petId);
    await updatePet(ctx.db, ctx.accountId, input.petId, { metadata: input.metadata, breed: input.breed });
    await audit(ctx, "pet.update", input.petId, { changed: changedPetFields(before, input) });
    return { petId: input.petId };
  },
});

export const deletePetAction = accountAction({
  capability: "pets:write",
  input: z.object({ petId: petIdSchema }),
  async run(ctx, input) {
    await deletePet(ctx.db, ctx.accountId, input.petId);
    await audit(ctx, "pet.delete", input.petId);
    return { petId: input.petId };
  },
});
