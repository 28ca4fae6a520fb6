import type { Species } from "@/lib/generated/prisma/enums";
import type { Db } from "@/lib/db/connect";
import * as engine from "@/lib/engine";
import { runJob } from "@/lib/jobs/run-job";
import { noseCapture } from "./nose-images";

/**
 * A new pet of the account registered as a registration job leaves it: synthetic dog `seed`'s `captures` analysed by
 * the engine and stored as the session's images, then the job run to its end in this process (no server).
 */
export async function registerByJob(
  db: Db,
  accountId: string,
  seed: number,
  captures: number[],
  pet: { species?: Species; poolId?: string } = {},
): Promise<{ petId: string; jobId: string }> {
  const species = pet.species ?? "DOG";
  const { id: petId } = await db.pet.create({ data: { accountId, species, poolId: pet.poolId } });
  const session = await db.captureSession.create({
    data: { accountId, species, purpose: "PET_PROFILE_REGISTRATION", petId, expiresAt: new Date(Date.now() + 3_600_000), usedAt: new Date() },
  });
  for (const capture of captures) {
    const analysis = await engine.analyseImage(await noseCapture(seed, capture));
    if (!analysis.ok || !analysis.template) throw new Error(`capture ${capture} of ${seed} gave no template`);
    await db.fingerprintImage.create({
      data: {
        accountId,
        sessionId: session.id,
        filePath: `images/${accountId}/${session.id}/fingerprint-${capture}.jpg`,
        byteSize: 1,
        usable: analysis.quality.usable,
        quality: JSON.parse(JSON.stringify(analysis.quality)),
        template: Buffer.from(analysis.template),
        engineVersion: engine.ENGINE_VERSION,
      },
    });
  }
  const job = await db.job.create({ data: { accountId, kind: "FINGERPRINT_ADDITION", petId, sessionId: session.id } });
  await db.pet.update({ where: { id: petId }, data: { activeAdditionJobId: job.id } });
  await runJob(db, job.id);
  return { petId, jobId: job.id };
}
