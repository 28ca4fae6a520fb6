import path from "node:path";
import { z } from "zod";
import { LOG_LEVELS } from "./log";

// One validated view of the environment, shared by the server, the ops CLI and scripts/db.mjs,
// so that they always agree on which database and which data folder they use.
// Defaults make the embedded mode work with no variables at all.
const envSchema = z.object({
  DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  CAPTURE_SESSION_TTL_SECONDS: z.coerce.number().int().min(1).max(7 * 24 * 3600).default(3600),
  // "embedded": this process runs the jobs it starts. "none": it only records them PENDING, for
  // workers elsewhere (issue 5) to run; jobs then wait until a process with a runner resumes them.
  JOB_RUNNER: z.enum(["embedded", "none"]).default("embedded"),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  // Jobs go through BullMQ on this Redis: the web process only enqueues, `npm run worker` runs them.
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  // Prefix of every BullMQ key, so that several deployments (or tests) can share one Redis.
  JOB_QUEUE_PREFIX: z.string().min(1).default("rhinarium"),
  // A worker that stops renewing a job's lock for this long (killed, frozen) has its job taken over.
  JOB_LOCK_MS: z.coerce.number().int().min(1000).default(30_000),
  // How often a worker looks for PENDING jobs the queue lost (never enqueued, or failed in Redis).
  JOB_RECONCILE_MS: z.coerce.number().int().min(500).default(60_000),
  // Images in an S3-compatible store instead of DATA_DIR: s3://bucket[/prefix]?endpoint=...&region=...
  STORAGE_URL: z
    .string()
    .regex(/^s3:\/\/[^/?]+/, "must look like s3://bucket[/prefix]?endpoint=...&region=...")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  // Per API key: steady requests per second, and the burst a key may spend at once (429 beyond).
  API_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
  API_RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(100),
  // Per client address: key lookups that miss the key cache (each costs a database query), so that
  // guessing or rotating invalid keys is braked (429 beyond); valid keys are cached after one lookup.
  API_KEY_LOOKUPS_PER_SECOND: z.coerce.number().positive().default(10),
  API_KEY_LOOKUP_BURST: z.coerce.number().int().min(1).default(100),
  // Comma-separated addresses of reverse proxies in front of the server: only a request whose socket
  // comes from one of these has its X-Forwarded-For believed (sign-in limits are per client address).
  TRUSTED_PROXIES: z.string().default(""),
  // GET /metrics (Prometheus) asks for "Authorization: Bearer <this>"; unset, it answers loopback clients only.
  METRICS_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  // An unreferenced image file younger than this may be an upload in flight in another web process
  // (PostgreSQL mode); older ones are orphans of a crash and are removed (lib/storage/orphan-sweep.ts).
  ORPHAN_IMAGE_GRACE_SECONDS: z.coerce.number().int().min(0).default(600),
  // Outgoing e-mail (team invitations): smtp:// or smtps:// URL of a relay. Unset, each message is written
  // to DATA_DIR/outbox as an .eml file (readable by the service's user only) for an operator to pass on.
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  MAIL_FROM: z.string().min(3).default("Rhinarium <no-reply@rhinarium.invalid>"),
  // The key that encrypts webhook signing secrets at rest (lib/webhooks/secret-box.ts). Unset, it is derived from
  // the session-signing key (NEXTAUTH_SECRET, else DATA_DIR/auth-secret); every process that sends webhooks needs the same.
  WEBHOOK_SECRET_KEY: z
    .string()
    .min(16, "must be at least 16 characters")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  // "1": webhook endpoints may be http:// and resolve to loopback, private or link-local addresses (tests, a
  // receiver on the same private network). Unset, only https:// endpoints on public addresses are accepted and called.
  WEBHOOKS_ALLOW_PRIVATE: z
    .enum(["0", "1", ""])
    .default("")
    .transform((v) => v === "1"),
});

export type Env = z.infer<typeof envSchema> & { dataDir: string };

export function readEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const parsed = envSchema
    .refine((env) => !env.REDIS_URL || env.DATABASE_URL, {
      path: ["REDIS_URL"],
      message: "needs DATABASE_URL: workers in other processes cannot share the embedded database",
    })
    .safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.DATA_DIR) };
}
