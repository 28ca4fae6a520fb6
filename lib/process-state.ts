/**
 * What a process keeps once. Next compiles a module into more than one bundle (the start-up's, the
 * pages', the server actions') and reloads modules in dev, each time with a fresh module scope; the
 * objects below must nevertheless be one per process (one database client, one worker pool, one
 * cache listening for changes…). They live here, in one object on globalThis, each under its name.
 * The module named beside each is the only one that reads or writes it.
 */
export interface ProcessStateNames {
  /** lib/db/index.ts: the database being opened or open, and the open one (read without awaiting). */
  database: true;
  openedDatabase: true;
  /** lib/server/start.ts: the server's start-up, run once. */
  serverStart: true;
  /** lib/jobs/job-queue.ts: the job queue the start-up chose. */
  jobQueue: true;
  /** lib/webhooks/dispatcher.ts: the webhook dispatcher of a process that runs jobs. */
  webhookDispatcher: true;
  /** lib/auth/options.ts: the sign-in service (its lockout and brake state). */
  signIn: true;
  /** lib/api/metering.ts: API usage waiting to be written, per database client. */
  usageBuffers: true;
  /** lib/api/handle-request.ts: the per-key and per-address rate limiters. */
  rateLimiters: true;
  /** lib/galleries/gallery-manager.ts: the 1:N galleries this process holds. */
  galleries: true;
  /** lib/storage/images.ts: the image store. */
  imageStore: true;
  /** lib/metrics.ts: the Prometheus registry. */
  metrics: true;
  /** lib/accounts/api-key-cache.ts: the API key cache. */
  apiKeyCache: true;
  /** lib/pets/pet-view-cache.ts: the pet view cache. */
  petViewCache: true;
  /** lib/engine/index.ts: the engine, with its worker pool. */
  engine: true;
  /** scripts/server.mjs sets it; lib/api/node-front.ts (exposeApiFront) hands the API to it. */
  apiFrontHandover: true;
}
export type ProcessStateName = keyof ProcessStateNames;

const store = ((globalThis as unknown as { __rhinarium?: Partial<Record<ProcessStateName, unknown>> }).__rhinarium ??= {});

/** The process's one `name`, made by `make` the first time any bundle asks. */
export function processWide<T>(name: ProcessStateName, make: () => T): T {
  if (!(name in store)) store[name] = make();
  return store[name] as T;
}

/** An entry its owner sets and clears itself (the database, the job queue). */
export function processSlot<T>(name: ProcessStateName): { get(): T | undefined; set(value: T | undefined): void } {
  return {
    get: () => store[name] as T | undefined,
    set: (value) => {
      if (value === undefined) delete store[name];
      else store[name] = value;
    },
  };
}
