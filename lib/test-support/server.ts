import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

// Runs the real production server (`next start`) for contract tests: one build per test run, then
// a server per mode with its own port and data folder (and, in PostgreSQL mode, its own database).

const run = promisify(execFile);
const root = process.cwd();

export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * `next build` once per test run, shared by every test file that starts servers (they run in parallel
 * forks: a lock folder makes the others wait, then find the build newer than the run's start, set by
 * vitest.config.ts); skipped when the suite was told the build is fresh (CONTRACT_SKIP_BUILD=1).
 */
export async function buildOnce(): Promise<void> {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (process.env.CONTRACT_SKIP_BUILD === "1" && fs.existsSync(buildId)) return;
  const lock = path.join(root, ".next-build.lock");
  const runStarted = Number(process.env.RHINARIUM_TEST_RUN_STARTED ?? Date.now());
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // A lock older than any build is left by a killed run.
      const held = fs.statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 10 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    if (fs.existsSync(buildId) && fs.statSync(buildId).mtimeMs > runStarted) return;
    await run("npx", ["next", "build"], { cwd: root, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" }, maxBuffer: 64 * 1024 * 1024 });
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

export interface TestServer {
  baseUrl: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  log: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServer(
  options: { dataDir?: string; databaseUrl?: string; port?: number; jobRunner?: "embedded" | "none"; env?: Record<string, string> } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "rhinarium-contract-"));
  const port = options.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl ?? "",
    LOG_LEVEL: "error",
    JOB_RUNNER: options.jobRunner ?? "embedded",
    NEXT_MANUAL_SIG_HANDLE: "true",
    ...options.env,
  };
  const child: ChildProcess = spawn(path.join(root, "node_modules", ".bin", "next"), ["start", "-H", "127.0.0.1", "-p", String(port)], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  // Ready when the API answers (instrumentation has migrated the database by then).
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    try {
      const res = await fetch(`${baseUrl}/v2/pets`);
      if (res.status === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    baseUrl,
    dataDir,
    env,
    log: () => output,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** `npm run --silent ops -- ...` with the server's configuration; answers the last stdout line, parsed. */
export async function ops(env: NodeJS.ProcessEnv, ...argv: string[]): Promise<Record<string, unknown>> {
  const result = await run("node", [path.join(root, "scripts", "ops.mjs"), ...argv], { cwd: root, env }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }),
  );
  const lines = result.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
}

/** PostgreSQL answers, or is started the way the stack notes say; the PostgreSQL suite needs it. */
export async function ensurePostgres(): Promise<void> {
  if (await pgAvailable()) return;
  const versions = fs.existsSync("/etc/postgresql") ? fs.readdirSync("/etc/postgresql") : [];
  if (versions.length > 0) {
    await run("pg_ctlcluster", ["--skip-systemctl-redirect", versions[0], "main", "start"]).catch(() => undefined);
  }
  for (let i = 0; i < 20 && !(await pgAvailable()); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await pgAvailable())) throw new Error(`PostgreSQL does not answer at ${PG_ADMIN_URL}`);
}

async function pgAvailable(): Promise<boolean> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export async function adminSql(sql: string, url = PG_ADMIN_URL): Promise<unknown[]> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}
