import { z } from "zod";
import { JsonText } from "@/lib/json-text";
import { defineEndpoint } from "../endpoint";
import { awaitCacheInvalidation } from "@/lib/db/notified-cache";
import { readPetViewJson, serverPetViewCache } from "@/lib/pets/pet-view-cache";
import { createPet, deletePet, listPetPages, updatePet } from "@/lib/pets/pets";
import { createPetBodySchema, idDataSchema, petIdParamsSchema, petSchema, updatePetBodySchema } from "@/lib/pets/schemas";

export const petEndpoints = [
  defineEndpoint({
    method: "POST",
    path: "/v2/pets",
    operationId: "createPet",
    summary: "Create a pet",
    tag: "Pets",
    bodyKind: "json",
    body: createPetBodySchema,
    successStatus: 201,
    response: idDataSchema,
    errors: ["PetLimitExceededError"],
    audit: { action: "pet.create", target: (_input, data) => (data as { id: string }).id, data: ({ body }) => ({ species: body.species }) },
    handle: ({ body }, { db, accountId, account }) => createPet(db, accountId, body, account.plan?.petLimit ?? null),
  }),
  defineEndpoint({
    method: "GET",
    path: "/v2/pets",
    operationId: "listPets",
    summary: "List all pets of the account, oldest first (not paginated)",
    tag: "Pets",
    successStatus: 200,
    response: z.array(petSchema),
    errors: [],
    // Serialised page by page (see listPetPages), so no one slice of work holds the event loop.
    handle: async (_input, { db, accountId }) => {
      const pages: string[] = [];
      for await (const page of listPetPages(db, accountId)) pages.push(JSON.stringify(page).slice(1, -1));
      return new JsonText(`[${pages.join(",")}]`);
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/v2/pets/{petId}",
    operationId: "getPet",
    summary: "Get a pet",
    tag: "Pets",
    params: petIdParamsSchema,
    successStatus: 200,
    response: petSchema,
    errors: ["NoSuchPetException"],
    handle: ({ params }, { db, accountId }) => readPetViewJson(serverPetViewCache(), db, accountId, params.petId),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/v2/pets/{petId}",
    operationId: "updatePet",
    summary: "Update a pet's metadata (and breed)",
    tag: "Pets",
    bodyKind: "json",
    params: petIdParamsSchema,
    body: updatePetBodySchema,
    successStatus: 200,
    response: z.object({ isSuccessful: z.boolean() }),
    errors: ["NoSuchPetException"],
    audit: { action: "pet.update", target: ({ params }) => params.petId, data: ({ body }) => ({ changed: Object.keys(body).sort().join(", ") }) },
    handle: async ({ params, body }, { db, accountId }) => {
      await updatePet(db, accountId, params.petId, body);
      // Acknowledged once no process can answer the old view from memory (read-your-writes).
      await awaitCacheInvalidation();
      return { isSuccessful: true };
    },
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/v2/pets/{petId}",
    operationId: "deletePet",
    summary: "Delete a pet with its fingerprints, appearance images and files (cannot be undone)",
    tag: "Pets",
    params: petIdParamsSchema,
    successStatus: 204,
    errors: ["NoSuchPetException"],
    audit: { action: "pet.delete", target: ({ params }) => params.petId },
    handle: async ({ params }, { db, accountId }) => {
      await deletePet(db, accountId, params.petId);
      await awaitCacheInvalidation();
    },
  }),
];
