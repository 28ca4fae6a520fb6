-- AlterTable
ALTER TABLE "FingerprintImage" ADD COLUMN     "turnedViews" BYTEA;
