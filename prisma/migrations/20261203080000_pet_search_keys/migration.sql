-- CreateTable
CREATE TABLE "PetSearchKeys" (
    "petId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "imageIds" TEXT[],
    "engineVersion" INTEGER NOT NULL,
    "keys" BYTEA NOT NULL,

    CONSTRAINT "PetSearchKeys_pkey" PRIMARY KEY ("petId")
);

-- AddForeignKey
ALTER TABLE "PetSearchKeys" ADD CONSTRAINT "PetSearchKeys_petId_fkey" FOREIGN KEY ("petId") REFERENCES "Pet"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every enrolled pet whose usable images all hold a search key of one engine version gets its entry now, so that the
-- first gallery load after this migration reads entries (lib/galleries/gallery-rows.ts, writePetSearchKeys).
INSERT INTO "PetSearchKeys" ("petId", "accountId", "imageIds", "engineVersion", "keys")
SELECT f."petId", min(f."accountId"), array_agg(f.id ORDER BY f."createdAt", f.id), min(f."engineVersion"),
  string_agg(int4send(length(f."searchKey")) || f."searchKey", ''::bytea ORDER BY f."createdAt", f.id)
FROM "FingerprintImage" f
WHERE f."petId" IS NOT NULL AND f.usable
GROUP BY f."petId"
HAVING bool_and(f."searchKey" IS NOT NULL) AND count(DISTINCT f."engineVersion") = 1 AND bool_and(f."engineVersion" IS NOT NULL);
