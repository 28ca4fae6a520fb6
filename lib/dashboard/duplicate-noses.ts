import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import { petLabel } from "./pet-fields";

// What registrations recorded about noses that match another pet of the account (lib/jobs/run-job.ts: a job's
// details.duplicates and the audit log's pet.duplicate-prints rows), for the job and pet pages.

const duplicatesSchema = z.object({ duplicates: z.array(z.object({ petId: z.string(), score: z.number() })) }).loose();

export interface NoseMatch {
  petId: string;
  score: number;
  /** The pet's label; null when it has been deleted since. */
  label: string | null;
  /** The registration that found the match. */
  jobId: string;
}

async function labelled(db: Db, accountId: string, matches: Omit<NoseMatch, "label">[]): Promise<NoseMatch[]> {
  const pets = await db.pet.findMany({ where: { accountId, id: { in: matches.map((m) => m.petId) } }, select: { id: true, species: true, breed: true, metadata: true } });
  const byId = new Map(pets.map((p) => [p.id, p]));
  return matches.map((m) => {
    const pet = byId.get(m.petId);
    return { ...m, label: pet ? petLabel(pet) : null };
  });
}

/** The pets a registration job's prints matched (none for other jobs, or when nothing matched). */
export async function jobNoseMatches(db: Db, accountId: string, job: { id: string; kind: string; details: unknown }): Promise<NoseMatch[]> {
  if (job.kind !== "FINGERPRINT_ADDITION") return [];
  const parsed = duplicatesSchema.safeParse(job.details);
  if (!parsed.success) return [];
  return labelled(db, accountId, parsed.data.duplicates.map((d) => ({ ...d, jobId: job.id })));
}

const auditDataSchema = z.object({ jobId: z.string(), matches: z.array(z.object({ petId: z.string(), score: z.number() })) }).loose();

/**
 * The other pets whose noses match this pet's, best first, as either pet's registration recorded it: this pet's
 * registration matched them, or theirs matched this pet.
 */
export async function petNoseMatches(db: Db, accountId: string, petId: string): Promise<NoseMatch[]> {
  const rows = await db.auditLog.findMany({
    where: { accountId, action: "pet.duplicate-prints", OR: [{ target: petId }, { data: { path: ["matchedPetIds"], array_contains: [petId] } }] },
    select: { target: true, data: true },
    orderBy: { createdAt: "desc" },
    take: 50,
  });
  const best = new Map<string, Omit<NoseMatch, "label">>();
  for (const row of rows) {
    const data = auditDataSchema.safeParse(row.data);
    if (!data.success || !row.target) continue;
    const found =
      row.target === petId
        ? data.data.matches
        : data.data.matches.filter((m) => m.petId === petId).map((m) => ({ petId: row.target!, score: m.score }));
    for (const m of found) {
      if (m.petId === petId) continue;
      if ((best.get(m.petId)?.score ?? -1) < m.score) best.set(m.petId, { petId: m.petId, score: m.score, jobId: data.data.jobId });
    }
  }
  return labelled(db, accountId, [...best.values()].sort((a, b) => b.score - a.score));
}
