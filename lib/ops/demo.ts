import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { RhinariumClient } from "@rhinarium/sdk";
import { startProgress } from "@/lib/progress";
import { captureFileName, generateDataset, subjectDirName } from "@/lab/synth/dataset";

/**
 * `ops demo`: fills a clinic through the public API, as a clinic's app would, with synthetic noses
 * (lab/synth): registered pets with enrolled prints, verification and identification jobs that
 * succeed, and a registration that fails on blurred photos, so every dashboard page has something.
 * It runs in the CLI's process (rendering noses is heavy), against a running server.
 */

const NAMES = ["Rex", "Luna", "Milo", "Bella", "Charlie", "Daisy", "Max", "Coco", "Rocky", "Nala", "Toby", "Ruby"];
const BREEDS = ["Beagle", "Labrador", "Border Collie", "Dachshund", "Boxer", "Poodle"];

export interface DemoOptions {
  baseUrl: string;
  apiKey: string;
  pets: number;
}

export async function fillDemo({ baseUrl, apiKey, pets }: DemoOptions): Promise<Record<string, number>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-demo-"));
  try {
    // One subject a pet, and one more whose photos serve as the appearance pictures.
    const subjects = pets + 1;
    const rendering = startProgress("rendering noses", subjects);
    // In this thread: the generator's worker threads load its TypeScript through tsx, which a deployed CLI does not have.
    await generateDataset({ out: dir, subjects, captures: 8, seed: 4242, difficulty: "normal", workers: 1, onSubjectDone: () => rendering.tick() });
    rendering.stop();
    const image = (subject: number, capture: number) => fs.readFileSync(path.join(dir, subjectDirName(subject, subjects), captureFileName(capture, 8)));
    const appearance = image(pets, 0);
    const client = new RhinariumClient({ baseUrl, apiKey, pollIntervalMs: 500, maxPolls: 1_000, maxWaitMs: 300_000 });
    const counts = { pets: 0, registered: 0, verified: 0, identified: 0, failed: 0 };

    const session = async (purpose: "PET_PROFILE_REGISTRATION" | "PET_VERIFICATION" | "PET_IDENTIFICATION", petId: string | undefined, noses: Buffer[]) => {
      const created = await client.createCaptureSession({ species: "DOG", purpose, ...(petId ? { petId } : {}) });
      for (const nose of noses) await client.uploadFingerprint(created.id, nose);
      await client.uploadAppearance(created.id, appearance);
      return created.id;
    };
    const newPet = async (i: number) => {
      counts.pets++;
      const pet = await client.createPet({ species: "DOG", breed: BREEDS[i % BREEDS.length], metadata: JSON.stringify({ name: NAMES[i % NAMES.length], demo: true }) });
      return pet.id;
    };

    const progress = startProgress("registering", pets + 3);
    const petIds: string[] = [];
    for (let i = 0; i < pets; i++) {
      const petId = await newPet(i);
      const noses = [0, 1, 2, 3, 4].map((c) => image(i, c));
      const job = await client.waitForFingerprintAddition((await client.addFingerprints(petId, await session("PET_PROFILE_REGISTRATION", petId, noses))).jobId);
      if (job.status === "SUCCESS") counts.registered++;
      petIds.push(petId);
      progress.tick();
    }
    // A registration that fails: the same noses, blurred past recognition (the job keeps why, for support).
    const blurred = await Promise.all([0, 1, 2, 3, 4].map((c) => sharp(image(0, c)).blur(30).jpeg({ quality: 90 }).toBuffer()));
    const blurredPet = await newPet(pets);
    const failed = await client.waitForFingerprintAddition((await client.addFingerprints(blurredPet, await session("PET_PROFILE_REGISTRATION", blurredPet, blurred))).jobId);
    if (failed.status === "FAILED") counts.failed++;
    progress.tick();
    // A verification and an identification with new photos of the first pet.
    const probe = [5, 6, 7].map((c) => image(0, c));
    const verification = await client.waitForVerification((await client.verifyPet(petIds[0], await session("PET_VERIFICATION", petIds[0], probe))).jobId);
    if (verification.status === "SUCCESS") counts.verified++;
    progress.tick();
    const identification = await client.waitForIdentification((await client.identifyPet(await session("PET_IDENTIFICATION", undefined, probe))).jobId);
    if (identification.status === "SUCCESS") counts.identified++;
    progress.tick();
    progress.stop();
    return counts;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
