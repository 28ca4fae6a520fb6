import { z } from "zod";
import { Species } from "@/lib/generated/prisma/enums";

/** The species the API and the dashboard accept: Prisma's enum (prisma/schema.prisma), the one list of them. */
export const speciesSchema = z.enum(Species, { error: "must be DOG or CAT" });

export const MAX_METADATA_LENGTH = 16_384;
export const MAX_BREED_LENGTH = 200;

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// The contract says metadata is JSON-encoded text the client parses after reading: refusing text
// that does not parse keeps that promise for every reader (other clients, the dashboard's editor).
export const metadataSchema = z
  .string({ error: "must be a string holding JSON-encoded text" })
  .max(MAX_METADATA_LENGTH, `must be at most ${MAX_METADATA_LENGTH} characters`)
  .refine(isJsonText, "must be valid JSON-encoded text");

export const breedSchema = z
  .string({ error: "must be a string" })
  .max(MAX_BREED_LENGTH, `must be at most ${MAX_BREED_LENGTH} characters`);

export const createPetBodySchema = z.object(
  { species: speciesSchema, breed: breedSchema.optional(), metadata: metadataSchema.optional() },
  { error: "must be a JSON object" },
);

export const updatePetBodySchema = z.object(
  { metadata: metadataSchema, breed: breedSchema.optional() },
  { error: "must be a JSON object" },
);

export const petIdParamsSchema = z.object({ petId: z.string().min(1) });

export const petSchema = z.object({
  id: z.string(),
  species: speciesSchema,
  breed: z.string().nullable(),
  metadata: z.string().nullable(),
  hasFingerprint: z.boolean(),
  createdAt: z.iso.datetime(),
});

export type PetView = z.infer<typeof petSchema>;

export const idDataSchema = z.object({ id: z.string() });
