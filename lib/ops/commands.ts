import type { Db } from "@/lib/db/connect";
import type { Env } from "@/lib/env";
import type { Prisma } from "@/lib/generated/prisma/client";
import { deactivateApiKeys, issueApiKey, reissueApiKey } from "@/lib/accounts/api-keys";
import { ensureDefaultPlans, upsertPlan } from "@/lib/accounts/plans";
import { recordAudit } from "@/lib/accounts/audit";
import { createUser, EmailTakenError, newUserSchema, USER_ROLES } from "@/lib/accounts/users";
import { summariseUsage } from "@/lib/api/metering";
import { recordGalleryChanges } from "@/lib/galleries/gallery-changes";

export { OpsUsageError } from "./errors";
import { OpsUsageError } from "./errors";
import { writeBackup } from "./backup";

/** What a command may need of the process it runs in besides the database client. */
export interface OpsHere {
  env: Env;
  /** The embedded database's dump (lib/db/connect.ts OpenDatabase.dump); undefined in PostgreSQL mode. */
  dump?: () => Promise<Blob | undefined>;
}

interface ParsedArgs {
  positional: string[];
  flags: Record<string, string>;
}

export function parseArgs(argv: string[]): ParsedArgs {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split("=", 2);
      if (inline !== undefined) flags[name] = inline;
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[name] = argv[++i];
      else flags[name] = "true";
    } else positional.push(arg);
  }
  return { positional, flags };
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new OpsUsageError(`missing ${what}`);
  return value;
}

function audit(db: Db, action: string, accountId: string | null, data: Prisma.InputJsonValue = {}) {
  return recordAudit(db, { kind: "operator-cli" }, { action, accountId, data });
}

async function getAccountOrThrow(db: Db, accountId: string) {
  const account = await db.account.findUnique({ where: { id: accountId } });
  if (!account) throw new OpsUsageError(`no account ${accountId}`);
  return account;
}

async function planIdOrNull(db: Db, name: string): Promise<string | null> {
  if (name === "none") return null;
  const plan = await db.plan.findUnique({ where: { name } });
  if (!plan) throw new OpsUsageError(`no plan ${name} (see plan:upsert)`);
  return plan.id;
}

type Command = (db: Db, args: ParsedArgs, here: OpsHere) => Promise<Record<string, unknown>>;

/** Suspension is account-level (403 10010 on every call), not key-level. */
function setSuspended(suspended: boolean): Command {
  return async (db, { positional }) => {
    const accountId = required(positional[0], "ID");
    await getAccountOrThrow(db, accountId);
    await db.account.update({ where: { id: accountId }, data: { suspended } });
    await audit(db, suspended ? "account.suspend" : "account.reinstate", accountId);
    return { accountId, suspended };
  };
}

export const OPS_COMMANDS: Record<string, { usage: string; run: Command }> = {
  backup: {
    usage: "backup DIR",
    run: (_db, { positional }, here) => writeBackup(here.env, here.dump, required(positional[0], "DIR")),
  },
  seed: {
    usage: "seed",
    run: async (db) => {
      await ensureDefaultPlans(db);
      return { plans: await db.plan.findMany({ select: { name: true, petLimit: true, identification: true }, orderBy: { name: "asc" } }) };
    },
  },
  "plan:upsert": {
    usage: "plan:upsert NAME --pet-limit N|unlimited --identification yes|no",
    run: async (db, { positional, flags }) => {
      const name = required(positional[0], "NAME");
      const limit = required(flags["pet-limit"], "--pet-limit");
      const identification = required(flags.identification, "--identification");
      if (limit !== "unlimited" && !/^\d+$/.test(limit)) throw new OpsUsageError("--pet-limit must be a number or unlimited");
      if (identification !== "yes" && identification !== "no") throw new OpsUsageError("--identification must be yes or no");
      const plan = await upsertPlan(db, { name, petLimit: limit === "unlimited" ? null : Number(limit), identification: identification === "yes" });
      await audit(db, "plan.upsert", null, { name, petLimit: plan.petLimit, identification: plan.identification });
      return { plan: { name: plan.name, petLimit: plan.petLimit, identification: plan.identification } };
    },
  },
  "account:create": {
    usage: "account:create --name N [--plan P|none]",
    run: async (db, { flags }) => {
      const name = required(flags.name, "--name");
      const planId = await planIdOrNull(db, flags.plan ?? "none");
      const account = await db.account.create({ data: { name, planId } });
      const { apiKey } = await issueApiKey(db, account.id);
      await audit(db, "account.create", account.id, { name, plan: flags.plan ?? "none" });
      return { accountId: account.id, apiKey };
    },
  },
  "account:list": {
    usage: "account:list",
    run: async (db) => {
      const accounts = await db.account.findMany({
        orderBy: { createdAt: "asc" },
        select: { id: true, name: true, suspended: true, plan: { select: { name: true } }, _count: { select: { pets: true, users: true } } },
      });
      return {
        accounts: accounts.map((a) => ({ accountId: a.id, name: a.name, plan: a.plan?.name ?? "none", suspended: a.suspended, pets: a._count.pets, users: a._count.users })),
      };
    },
  },
  "account:plan": {
    usage: "account:plan ID P|none",
    run: async (db, { positional }) => {
      const accountId = required(positional[0], "ID");
      const planName = required(positional[1], "P|none");
      await getAccountOrThrow(db, accountId);
      await db.account.update({ where: { id: accountId }, data: { planId: await planIdOrNull(db, planName) } });
      await audit(db, "account.plan", accountId, { plan: planName });
      return { accountId, plan: planName };
    },
  },
  "account:suspend": { usage: "account:suspend ID", run: setSuspended(true) },
  "account:reinstate": { usage: "account:reinstate ID", run: setSuspended(false) },
  "key:issue": {
    usage: "key:issue ID [--name N] [--expires ISO-DATE]   (ID = account id; one more key, the others keep working)",
    run: async (db, { positional, flags }) => {
      const accountId = required(positional[0], "ID");
      await getAccountOrThrow(db, accountId);
      const expiresAt = flags.expires === undefined ? null : new Date(flags.expires);
      if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new OpsUsageError("--expires must be a date, e.g. 2027-01-31T00:00:00Z");
      const { apiKey } = await issueApiKey(db, accountId, { name: flags.name, expiresAt });
      await audit(db, "key.issue", accountId, { name: flags.name ?? "", expiresAt: expiresAt?.toISOString() ?? null });
      return { accountId, apiKey, expiresAt: expiresAt?.toISOString() ?? null };
    },
  },
  "key:reissue": {
    usage: "key:reissue ID   (ID = account id; every old key stops working)",
    run: async (db, { positional }) => {
      const accountId = required(positional[0], "ID");
      await getAccountOrThrow(db, accountId);
      const { apiKey } = await reissueApiKey(db, accountId);
      await audit(db, "key.reissue", accountId);
      return { apiKey };
    },
  },
  "key:deactivate": {
    usage: "key:deactivate ID   (ID = account id; deactivates all its keys)",
    run: async (db, { positional }) => {
      const accountId = required(positional[0], "ID");
      await getAccountOrThrow(db, accountId);
      const deactivated = await deactivateApiKeys(db, accountId);
      await audit(db, "key.deactivate", accountId, { deactivated });
      return { accountId, deactivated };
    },
  },
  "pool:create": {
    usage: "pool:create --account ID --name N [--pets PET_ID,PET_ID...]",
    run: async (db, { flags }) => {
      const accountId = required(flags.account, "--account");
      const name = required(flags.name, "--name");
      await getAccountOrThrow(db, accountId);
      const pool = await db.searchPool.upsert({ where: { accountId_name: { accountId, name } }, create: { accountId, name }, update: {} });
      const petIds = flags.pets ? flags.pets.split(",").filter(Boolean) : [];
      // Moved pets leave their old pool's galleries and join this one's, in every process.
      const { count } = await db.$transaction(async (tx) => {
        await recordGalleryChanges(tx, accountId, petIds);
        return tx.pet.updateMany({ where: { accountId, id: { in: petIds } }, data: { poolId: pool.id } });
      });
      await audit(db, "pool.create", accountId, { name, pets: count });
      return { accountId, pool: name, petsMoved: count };
    },
  },
  "pool:assign": {
    usage: "pool:assign --account ID --pool NAME|default   (the pool identification searches)",
    run: async (db, { flags }) => {
      const accountId = required(flags.account, "--account");
      const poolName = required(flags.pool, "--pool");
      await getAccountOrThrow(db, accountId);
      if (poolName !== "default") {
        const pool = await db.searchPool.findUnique({ where: { accountId_name: { accountId, name: poolName } } });
        if (!pool) throw new OpsUsageError(`no pool ${poolName} in account ${accountId} (see pool:create)`);
      }
      await db.account.update({ where: { id: accountId }, data: { searchPoolName: poolName === "default" ? null : poolName } });
      await audit(db, "pool.assign", accountId, { pool: poolName });
      return { accountId, searchPool: poolName };
    },
  },
  "pool:delete": {
    usage: "pool:delete --account ID --name N   (its pets return to the default pool only)",
    run: async (db, { flags }) => {
      const accountId = required(flags.account, "--account");
      const name = required(flags.name, "--name");
      const { count } = await db.searchPool.deleteMany({ where: { accountId, name } });
      if (count === 0) throw new OpsUsageError(`no pool ${name} in account ${accountId}`);
      await audit(db, "pool.delete", accountId, { name });
      return { accountId, deleted: name };
    },
  },
  "user:create": {
    // The CLI takes the password from a prompt or stdin and adds it here (lib/ops/cli.ts).
    usage: `user:create --email E --role ${USER_ROLES.join("|")} [--account ID] [--password-stdin]`,
    run: async (db, { flags }) => {
      const parsed = newUserSchema.safeParse({
        email: required(flags.email, "--email"),
        password: required(flags.password, "--password"),
        role: required(flags.role, "--role"),
        accountId: flags.account ?? null,
      });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const flag = { email: "--email", password: "--password", role: "--role", accountId: "--account" }[String(issue.path[0])] ?? "input";
        throw new OpsUsageError(`${flag} ${issue.message}`);
      }
      if (parsed.data.accountId) await getAccountOrThrow(db, parsed.data.accountId);
      const user = await createUser(db, parsed.data).catch((error) => {
        throw error instanceof EmailTakenError ? new OpsUsageError(error.message) : error;
      });
      await audit(db, "user.create", parsed.data.accountId, { email: user.email, role: user.role });
      return { userId: user.id, email: user.email, role: user.role };
    },
  },
  usage: {
    usage: "usage ID   (API calls of an account by route and status)",
    run: async (db, { positional }) => ({ usage: await summariseUsage(db, required(positional[0], "ID")) }),
  },
  "job:show": {
    usage: "job:show JOB_ID   (internal view, with the failure reason the API never returns)",
    run: async (db, { positional }) => {
      const job = await db.job.findUnique({ where: { id: required(positional[0], "JOB_ID") } });
      if (!job) throw new OpsUsageError("no such job");
      return { job: JSON.parse(JSON.stringify(job)) as Record<string, unknown> };
    },
  },
};

export async function runOpsCommand(db: Db, argv: string[], here: OpsHere): Promise<Record<string, unknown>> {
  const [name, ...rest] = argv;
  const command = name ? OPS_COMMANDS[name] : undefined;
  if (!command) {
    throw new OpsUsageError(`unknown command ${name ?? "(none)"}; commands: ${Object.values(OPS_COMMANDS).map((c) => c.usage).join(" | ")}`);
  }
  return command.run(db, parseArgs(rest), here);
}
