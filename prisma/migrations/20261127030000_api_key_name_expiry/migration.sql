-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "name" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "expiresAt" TIMESTAMP(3);
