-- AlterTable
ALTER TABLE "FingerprintImage" ADD COLUMN     "searchKey" BYTEA;
