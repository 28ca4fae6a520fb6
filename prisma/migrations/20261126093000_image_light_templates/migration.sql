-- AlterTable
ALTER TABLE "FingerprintImage" ADD COLUMN     "lightTemplate" BYTEA;
