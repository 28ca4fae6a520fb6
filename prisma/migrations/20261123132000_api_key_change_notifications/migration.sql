-- Web processes keep authenticated API keys (with their account and plan) in memory
-- (lib/accounts/api-key-cache.ts). Any change that can alter what a key may do (deactivation,
-- reissue, suspension, plan or search pool changes, deletions) notifies every listening process at
-- commit, whichever process or tool made it, and each one drops its cached keys.
-- Touching ApiKey."lastUsedAt" does not notify: it changes nothing a request depends on.
-- The body's statement separators are written \073 (octal for a semicolon): Prisma's PostgreSQL adapter applies a
-- migration by splitting it at every semicolon, dollar-quoted bodies included.
CREATE FUNCTION "rhinarium_notify_api_key_change"() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(\'rhinarium_api_key_change\', TG_TABLE_NAME)\073 RETURN NULL\073 END';

CREATE TRIGGER "ApiKey_notify_change" AFTER UPDATE OF "active", "hash", "accountId" OR DELETE ON "ApiKey"
  FOR EACH STATEMENT EXECUTE FUNCTION "rhinarium_notify_api_key_change"();

CREATE TRIGGER "Account_notify_change" AFTER UPDATE OR DELETE ON "Account"
  FOR EACH STATEMENT EXECUTE FUNCTION "rhinarium_notify_api_key_change"();

CREATE TRIGGER "Plan_notify_change" AFTER UPDATE OR DELETE ON "Plan"
  FOR EACH STATEMENT EXECUTE FUNCTION "rhinarium_notify_api_key_change"();
