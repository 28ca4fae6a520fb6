import { z } from "zod";
import { speciesSchema } from "@/lib/pets/schemas";

export const PURPOSES = ["PET_PROFILE_REGISTRATION", "PET_VERIFICATION", "PET_IDENTIFICATION"] as const;
export type Purpose = (typeof PURPOSES)[number];

export const createCaptureSessionBodySchema = z.object(
  {
    species: speciesSchema,
    purpose: z.enum(PURPOSES, { error: `must be one of ${PURPOSES.join(", ")}` }),
    // Conditionally required: a missing petId for a purpose that needs one is 20011, not 10001.
    petId: z.string({ error: "must be a string" }).min(1, "must not be empty").optional(),
  },
  { error: "must be a JSON object" },
);

export const sessionIdBodySchema = z.object(
  { sessionId: z.string({ error: "is required and must be a string" }).min(1, "must not be empty") },
  { error: "must be a JSON object" },
);

export const sessionIdQuerySchema = z.object({
  sessionId: z.string({ error: "is required" }).min(1, "must not be empty"),
});
