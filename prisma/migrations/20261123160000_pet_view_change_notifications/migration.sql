-- Web processes keep pet views (GET /v2/pets/{petId}) in memory (lib/pets/pet-view-cache.ts). A view
-- depends on the Pet row and on whether a fingerprint image is enrolled to the pet (FingerprintImage
-- rows with its "petId"). Any change to either notifies every listening process at commit with the
-- pet's id, whichever process or tool made it (API, dashboard, job workers, ops CLI, SQL). A TRUNCATE
-- notifies '*' (drop everything). Notifications of one transaction with the same payload arrive once.
-- Pet columns no view shows ("activeAdditionJobId", "poolId", "updatedAt") do not notify, nor
-- do inserted pets (a miss is never cached).
-- The body's statement separators are written \073 (octal for a semicolon): Prisma's PostgreSQL adapter applies a
-- migration by splitting it at every semicolon, comments and dollar-quoted bodies included.
CREATE FUNCTION "rhinarium_notify_pet_view_change"() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN IF TG_LEVEL = \'STATEMENT\' THEN PERFORM pg_notify(\'rhinarium_pet_view_change\', \'*\')\073 ELSIF TG_TABLE_NAME = \'Pet\' THEN PERFORM pg_notify(\'rhinarium_pet_view_change\', OLD.id)\073 IF TG_OP = \'UPDATE\' THEN PERFORM pg_notify(\'rhinarium_pet_view_change\', NEW.id)\073 END IF\073 ELSE IF TG_OP <> \'INSERT\' AND OLD."petId" IS NOT NULL THEN PERFORM pg_notify(\'rhinarium_pet_view_change\', OLD."petId")\073 END IF\073 IF TG_OP <> \'DELETE\' AND NEW."petId" IS NOT NULL THEN PERFORM pg_notify(\'rhinarium_pet_view_change\', NEW."petId")\073 END IF\073 END IF\073 RETURN NULL\073 END';

CREATE TRIGGER "Pet_notify_view_change" AFTER UPDATE OF "id", "accountId", "species", "breed", "metadata", "createdAt" OR DELETE ON "Pet"
  FOR EACH ROW EXECUTE FUNCTION "rhinarium_notify_pet_view_change"();

CREATE TRIGGER "Pet_notify_view_truncate" AFTER TRUNCATE ON "Pet"
  FOR EACH STATEMENT EXECUTE FUNCTION "rhinarium_notify_pet_view_change"();

CREATE TRIGGER "FingerprintImage_notify_pet_view_insert" AFTER INSERT ON "FingerprintImage"
  FOR EACH ROW WHEN (NEW."petId" IS NOT NULL) EXECUTE FUNCTION "rhinarium_notify_pet_view_change"();

CREATE TRIGGER "FingerprintImage_notify_pet_view_update" AFTER UPDATE OF "petId" ON "FingerprintImage"
  FOR EACH ROW WHEN (OLD."petId" IS DISTINCT FROM NEW."petId") EXECUTE FUNCTION "rhinarium_notify_pet_view_change"();

CREATE TRIGGER "FingerprintImage_notify_pet_view_delete" AFTER DELETE ON "FingerprintImage"
  FOR EACH ROW WHEN (OLD."petId" IS NOT NULL) EXECUTE FUNCTION "rhinarium_notify_pet_view_change"();

CREATE TRIGGER "FingerprintImage_notify_pet_view_truncate" AFTER TRUNCATE ON "FingerprintImage"
  FOR EACH STATEMENT EXECUTE FUNCTION "rhinarium_notify_pet_view_change"();
