-- CreateIndex
CREATE INDEX "Pet_accountId_id_idx" ON "Pet"("accountId", "id");
