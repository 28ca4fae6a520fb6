import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ENGINE_WORKER } from "@/scripts/build-engine.mjs";

// Runs the real production server (what `npm start` runs: scripts/server.mjs) for contract tests: one build per test run, then
// a server per mode with its own port and data folder (and, in PostgreSQL mode, its own database).

const run = promisify(execFile);
const root = process.cwd();

export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * `npm run build` (next build and the engine's worker) once per test run, however many test files ask (unless the suite was told the build
 * is fresh, CONTRACT_SKIP_BUILD=1). Test files run in worker processes of one vitest process: the
 * first to ask builds under a folder lock and stamps the build with that parent's pid; the others
 * wait for the lock and find the stamp.
 */
export async function buildOnce(): Promise<void> {
  const built = () => fs.existsSync(path.join(root, ".next", "BUILD_ID")) && fs.existsSync(path.join(root, ".next", ENGINE_WORKER));
  if (process.env.CONTRACT_SKIP_BUILD === "1" && built()) return;
  const stamp = path.join(root, ".next", "test-run-build");
  const lock = path.join(root, ".next-test-build.lock");
  const runId = String(process.ppid);
  const fresh = () => fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === runId && built();
  if (fresh()) return;
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // A lock older than any build is left by a killed run.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 5 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error("timed out waiting for another test file's next build");
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    if (fresh()) return;
    await run("npm", ["run", "build"], { cwd: root, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" }, maxBuffer: 64 * 1024 * 1024 });
    fs.writeFileSync(stamp, runId);
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
  /** The server process (scripts/server.mjs serves in this process). */
  pid: number;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  log: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServer(
  options: {
    dataDir?: string;
    databaseUrl?: string;
    port?: number;
    jobRunner?: "embedded" | "none";
    /** Extra variables, e.g. API_RATE_LIMIT_PER_SECOND or LOG_LEVEL. */
    env?: Record<string, string>;
  } = {},
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
    HOST: "127.0.0.1",
    PORT: String(port),
    // The server runs its build's compiled engine (.next/engine), not the one the test run compiled.
    ENGINE_WORKER_ENTRY: undefined,
    ...options.env,
  };
  // What `npm start` runs after its build.
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "scripts", "server.mjs")], {
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
    pid: child.pid!,
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
  return opsWithInput(env, "", ...argv);
}

/** The same, with `stdin` piped in (a password with `--password-stdin`). */
export async function opsWithInput(env: NodeJS.ProcessEnv, stdin: string, ...argv: string[]): Promise<Record<string, unknown>> {
  const running = run("node", [path.join(root, "scripts", "ops.mjs"), ...argv], { cwd: root, env });
  running.child.stdin?.end(stdin);
  const result = await running.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
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
