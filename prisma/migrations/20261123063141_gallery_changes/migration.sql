-- CreateTable
CREATE TABLE "GalleryChange" (
    "id" BIGSERIAL NOT NULL,
    "accountId" TEXT NOT NULL,
    "petId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "GalleryChange_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "GalleryChange_accountId_id_idx" ON "GalleryChange"("accountId", "id");

-- CreateIndex
CREATE INDEX "GalleryChange_createdAt_idx" ON "GalleryChange"("createdAt");

-- AddForeignKey
ALTER TABLE "GalleryChange" ADD CONSTRAINT "GalleryChange_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;
