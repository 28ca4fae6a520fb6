-- AlterTable
ALTER TABLE "Account" ADD COLUMN     "petFields" TEXT[] DEFAULT ARRAY['name', 'owner', 'phone', 'microchip']::TEXT[];
