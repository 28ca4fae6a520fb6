-- Usage is counted rather than logged (lib/api/metering.ts): one row per account, key, route, status
-- and second with the number of calls, instead of one row per call. The calls already logged are
-- carried over, counted per second, before the old table goes.

-- CreateTable
CREATE TABLE "ApiUsage" (
    "id" TEXT NOT NULL,
    "accountId" TEXT,
    "apiKeyId" TEXT,
    "method" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "second" TIMESTAMP(3) NOT NULL,
    "calls" INTEGER NOT NULL,
    "latencyMsSum" INTEGER NOT NULL,
    "latencyMsMax" INTEGER NOT NULL,

    CONSTRAINT "ApiUsage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ApiUsage_accountId_second_idx" ON "ApiUsage"("accountId", "second");

-- AddForeignKey
ALTER TABLE "ApiUsage" ADD CONSTRAINT "ApiUsage_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiUsage" ADD CONSTRAINT "ApiUsage_apiKeyId_fkey" FOREIGN KEY ("apiKeyId") REFERENCES "ApiKey"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Carry the logged calls over
INSERT INTO "ApiUsage" ("id", "accountId", "apiKeyId", "method", "route", "status", "second", "calls", "latencyMsSum", "latencyMsMax")
SELECT gen_random_uuid()::text, "accountId", "apiKeyId", "method", "route", "status", date_trunc('second', "createdAt"),
  count(*)::int, sum("latencyMs")::int, max("latencyMs")
FROM "ApiCall"
GROUP BY "accountId", "apiKeyId", "method", "route", "status", date_trunc('second', "createdAt");

-- DropForeignKey
ALTER TABLE "ApiCall" DROP CONSTRAINT "ApiCall_accountId_fkey";

-- DropForeignKey
ALTER TABLE "ApiCall" DROP CONSTRAINT "ApiCall_apiKeyId_fkey";

-- DropTable
DROP TABLE "ApiCall";
