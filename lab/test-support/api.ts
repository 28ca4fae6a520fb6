import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { adminSql, ensurePostgres, ops, PG_ADMIN_URL, startServer, type TestServer } from "./server";

// Raw /v2 calls for the reliability tests (statuses and bodies as they come, no retries), and a
// server per database mode with a way to look into its database.

export interface Answer {
  status: number;
  body: { data?: Record<string, unknown> & { id?: string; jobId?: string; status?: string }; errors?: { code: string; details?: Record<string, string[]> }[] } | undefined;
}

export function apiCaller(baseUrl: () => string, key: string) {
  async function call(method: string, urlPath: string, json?: unknown): Promise<Answer> {
    const res = await fetch(baseUrl() + urlPath, {
      method,
      headers: { "x-service-api-key": key, ...(json !== undefined ? { "content-type": "application/json" } : {}) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  async function upload(kind: "fingerprints" | "appearances", sessionId: string, bytes: Buffer): Promise<Answer> {
    const form = new FormData();
    form.append("file", new Blob([bytes as BlobPart], { type: "image/jpeg" }), "x.jpg");
    const res = await fetch(`${baseUrl()}/v2/${kind}:upload?sessionId=${encodeURIComponent(sessionId)}`, {
      method: "POST",
      headers: { "x-service-api-key": key },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  async function createPet(): Promise<string> {
    const res = await call("POST", "/v2/pets", { species: "DOG", metadata: "{}" });
    if (res.status !== 201) throw new Error(`create pet: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body!.data!.id!;
  }
  async function createSession(purpose: string, petId?: string): Promise<string> {
    const res = await call("POST", "/v2/capture-sessions", { species: "DOG", purpose, petId });
    if (res.status !== 201) throw new Error(`create session: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body!.data!.id!;
  }
  async function pollJob(kind: string, jobId: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await call("GET", `/v2/${kind}/${jobId}`);
      const status = res.body?.data?.status;
      if (res.status === 200 && status !== "PENDING") return status as string;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${status ?? res.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { call, upload, createPet, createSession, pollJob };
}

export function codeOf(answer: Answer): string | undefined {
  return answer.body?.errors?.[0]?.code;
}

/** Every image file under DATA_DIR/images, relative to DATA_DIR. */
export function imageFilesOnDisk(dataDir: string): string[] {
  const root = path.join(dataDir, "images");
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .map((p) => path.join("images", p))
    .filter((p) => fs.statSync(path.join(dataDir, p)).isFile());
}

/**
 * A production server on its own database: PGlite in a temporary folder, or a PostgreSQL database
 * named after the branch and process. `sql` reads the database; in PGlite mode it stops the server
 * (one process owns the folder), reads, and starts it again.
 */
export async function modeServer(mode: "pglite" | "postgres", label: string, options: Parameters<typeof startServer>[0] = {}) {
  const databaseName = `rhinarium_rely_${label}_${process.pid}_${Date.now()}`;
  let databaseUrl: string | undefined;
  if (mode === "postgres") {
    await ensurePostgres();
    await adminSql(`CREATE DATABASE ${databaseName}`);
    databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
  }
  const state = { server: await startServer({ ...options, databaseUrl: options.databaseUrl ?? databaseUrl }) };
  return {
    mode,
    databaseUrl,
    get server(): TestServer {
      return state.server;
    },
    async restart(restartOptions: Parameters<typeof startServer>[0] = {}, signal: NodeJS.Signals = "SIGTERM") {
      await state.server.stop(signal);
      state.server = await startServer({ ...options, databaseUrl: options.databaseUrl ?? databaseUrl, ...restartOptions, dataDir: state.server.dataDir });
    },
    async account(name: string): Promise<{ accountId: string; apiKey: string }> {
      const a = await ops(state.server.env, "account:create", "--name", name, "--plan", "standard");
      return { accountId: a.accountId as string, apiKey: a.apiKey as string };
    },
    async sql<T = Record<string, unknown>>(query: string): Promise<T[]> {
      if (databaseUrl) return (await adminSql(query, databaseUrl)) as T[];
      const dataDir = state.server.dataDir;
      await state.server.stop("SIGTERM");
      const db = await PGlite.create(path.join(dataDir, "db"));
      try {
        return (await db.query<T>(query)).rows;
      } finally {
        await db.close();
        state.server = await startServer({ ...options, dataDir });
      }
    },
    async close() {
      await state.server.stop();
      if (databaseName && mode === "postgres") await adminSql(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
      fs.rmSync(state.server.dataDir, { recursive: true, force: true });
    },
  };
}

export type ModeServer = Awaited<ReturnType<typeof modeServer>>;
