import { z } from "zod";
import type { Species } from "@/lib/generated/prisma/enums";

// The pets table's query (in the URL) and row shape: shared by the server page and the client table.

export const PET_SORTS = ["createdAt", "species", "breed"] as const;
export const PAGE_SIZES = [10, 25, 50] as const;

export const petListQuerySchema = z.object({
  page: z.coerce.number().int().min(1).catch(1),
  size: z.coerce.number().int().refine((n) => (PAGE_SIZES as readonly number[]).includes(n)).catch(10),
  sort: z.enum(PET_SORTS).catch("createdAt"),
  dir: z.enum(["asc", "desc"]).catch("desc"),
  q: z.string().trim().max(200).catch(""),
  species: z.enum(["DOG", "CAT", "all"]).catch("all"),
  fingerprint: z.enum(["yes", "no", "all"]).catch("all"),
});

export type PetListQuery = z.infer<typeof petListQuerySchema>;

/** One row of the dashboard's pet table. */
export interface PetListRow {
  id: string;
  species: Species;
  breed: string | null;
  metadata: string | null;
  enrolledImages: number;
  createdAt: string;
}
