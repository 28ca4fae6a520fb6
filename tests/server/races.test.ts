import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, codeOf, imageFilesOnDisk, modeServer, type ModeServer } from "@/lab/test-support/api";
import { appearanceJpeg, noseCapture } from "@/lab/test-support/nose-images";
import { buildOnce } from "@/lab/test-support/server";

// Concurrency over HTTP, in both database modes: the guarantees hold when requests race, not only
// one after another. Every count is checked against the database and the disk, not only the answers.

const PARALLEL = 5;
/** Reading a PGlite database restarts the server: seconds, more on a busy machine. */
const RACE_TEST_TIMEOUT_MS = 180_000;

function raceSuite(mode: "pglite" | "postgres") {
  let env: ModeServer;
  let api: ReturnType<typeof apiCaller>;
  let accountId: string;
  let noses: Buffer[];
  let appearance: Buffer;

  beforeAll(async () => {
    noses = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => noseCapture(11, i)));
    appearance = await appearanceJpeg(3);
    // No job runner: a started registration stays PENDING as long as the test needs.
    env = await modeServer(mode, "races", { jobRunner: "none", env: { API_RATE_LIMIT_BURST: "10000" } });
    const account = await env.account("Races");
    accountId = account.accountId;
    api = apiCaller(() => env.server.baseUrl, account.apiKey);
  }, RACE_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await env?.close();
  }, RACE_TEST_TIMEOUT_MS);

  async function finishedSession(purpose: string, petId: string | undefined, count: number) {
    const id = await api.createSession(purpose, petId);
    for (const nose of noses.slice(0, count)) expect((await api.upload("fingerprints", id, nose)).status).toBe(201);
    expect((await api.upload("appearances", id, appearance)).status).toBe(201);
    return id;
  }

  it(`starts exactly one fingerprint addition out of ${PARALLEL} concurrent ones on a pet (others 20007)`, async () => {
    const pet = await api.createPet();
    const sessions = [];
    for (let i = 0; i < PARALLEL; i++) sessions.push(await finishedSession("PET_PROFILE_REGISTRATION", pet, 5));
    const results = await Promise.all(sessions.map((s) => api.call("POST", `/v2/pets/${pet}:addFingerprints`, { sessionId: s })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && codeOf(r) === "SERVICEB2B20007")).toHaveLength(PARALLEL - 1);
    const [counts] = await env.sql<{ jobs: number; used: number }>(
      `SELECT (SELECT count(*)::int FROM "Job" WHERE "petId" = '${pet}') AS jobs,
              (SELECT count(*)::int FROM "CaptureSession" WHERE "petId" = '${pet}' AND "usedAt" IS NOT NULL) AS used`,
    );
    expect(counts).toEqual({ jobs: 1, used: 1 });
  }, RACE_TEST_TIMEOUT_MS);

  it(`consumes one capture session exactly once under ${PARALLEL} concurrent starts (others 20014)`, async () => {
    const pet = await api.createPet();
    const session = await finishedSession("PET_PROFILE_REGISTRATION", pet, 5);
    const results = await Promise.all(Array.from({ length: PARALLEL }, () => api.call("POST", `/v2/pets/${pet}:addFingerprints`, { sessionId: session })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(1);
    // The pet's addition is running too, so a loser may be refused for either reason: never a second job.
    for (const r of results.filter((r) => r.status !== 202)) expect(["SERVICEB2B20014", "SERVICEB2B20007"]).toContain(codeOf(r));
    const jobs = await env.sql<{ n: number }>(`SELECT count(*)::int AS n FROM "Job" WHERE "sessionId" = '${session}'`);
    expect(jobs[0].n).toBe(1);

    // Identification sessions have no pet lock in front: the session's claim alone decides.
    const probe = await finishedSession("PET_IDENTIFICATION", undefined, 3);
    const ids = await Promise.all(Array.from({ length: PARALLEL }, () => api.call("POST", "/v2/pets:identify", { sessionId: probe })));
    expect(ids.filter((r) => r.status === 202)).toHaveLength(1);
    expect(ids.filter((r) => codeOf(r) === "SERVICEB2B20014")).toHaveLength(PARALLEL - 1);
  }, RACE_TEST_TIMEOUT_MS);

  it("keeps the per-session image cap under concurrent uploads, with a file for every row and a row for every file", async () => {
    const pet = await api.createPet();
    const session = await api.createSession("PET_PROFILE_REGISTRATION", pet);
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => api.upload("appearances", session, i % 2 ? appearance : noses[0])));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5); // MAX_APPEARANCES_PER_SESSION
    for (const r of results.filter((r) => r.status !== 201)) expect(codeOf(r)).toBe("SERVICEB2B10001");
    // The disk first: reading a PGlite database restarts the server, whose start-up sweep removes orphans.
    const files = imageFilesOnDisk(env.server.dataDir).filter((f) => f.includes(session));
    const rows = await env.sql<{ filePath: string }>(`SELECT "filePath" FROM "AppearanceImage" WHERE "sessionId" = '${session}'`);
    expect(rows.map((r) => r.filePath).sort()).toEqual(files.sort());
    expect(files).toHaveLength(5);
  }, RACE_TEST_TIMEOUT_MS);

  it("uploads racing a job start: each upload is either refused (20014) or stored and part of the session, never lost", async () => {
    const pet = await api.createPet();
    const session = await finishedSession("PET_PROFILE_REGISTRATION", pet, 5);
    const [start, ...uploads] = await Promise.all([
      api.call("POST", `/v2/pets/${pet}:addFingerprints`, { sessionId: session }),
      ...noses.slice(0, 5).map((n) => api.upload("fingerprints", session, n)),
    ]);
    expect(start.status).toBe(202);
    for (const u of uploads) expect(u.status === 201 || codeOf(u) === "SERVICEB2B20014").toBe(true);
    const accepted = uploads.filter((u) => u.status === 201).map((u) => u.body!.data!.id);
    const files = imageFilesOnDisk(env.server.dataDir).filter((f) => f.includes(session));
    const rows = await env.sql<{ kind: string; id: string; filePath: string }>(
      `SELECT 'fingerprint' AS kind, id, "filePath" FROM "FingerprintImage" WHERE "sessionId" = '${session}'
       UNION ALL SELECT 'appearance', id, "filePath" FROM "AppearanceImage" WHERE "sessionId" = '${session}'`,
    );
    const fingerprints = rows.filter((r) => r.kind === "fingerprint");
    expect(fingerprints).toHaveLength(5 + accepted.length);
    for (const id of accepted) expect(fingerprints.map((r) => r.id)).toContain(id);
    expect(files.sort()).toEqual(rows.map((r) => r.filePath).sort());
  }, RACE_TEST_TIMEOUT_MS);

  it("deletes racing uploads and each other: one 204, no duplicate, no orphaned file, no row left", async () => {
    for (let round = 0; round < 4; round++) {
      const pet = await api.createPet();
      const session = await api.createSession("PET_PROFILE_REGISTRATION", pet);
      expect((await api.upload("fingerprints", session, noses[5])).status).toBe(201);
      const uploads = noses.slice(0, 4).map((n) => api.upload("fingerprints", session, n));
      // The deletes land while the uploads are in the engine, at a different point each round.
      await new Promise((r) => setTimeout(r, round * 40));
      const deletes = await Promise.all(Array.from({ length: 3 }, () => api.call("DELETE", `/v2/pets/${pet}`)));
      const settled = await Promise.all(uploads);
      expect(deletes.map((d) => d.status).sort()).toEqual([204, 404, 404]);
      for (const d of deletes.filter((d) => d.status === 404)) expect(codeOf(d)).toBe("SERVICEB2B20000");
      const unhandled = () => env.server.log().split("\n").filter((l) => l.includes("api-unhandled-error")).join("\n").slice(0, 2000);
      for (const u of settled) expect(u.status === 201 || codeOf(u) === "SERVICEB2B20010", `${JSON.stringify(u)}\n${unhandled()}`).toBe(true);
      expect((await api.call("GET", `/v2/pets/${pet}`)).status).toBe(404);
    }
    const onDisk = imageFilesOnDisk(env.server.dataDir).filter((f) => f.includes(accountId));
    const rows = await env.sql<{ kind: string; v: string }>(
      `SELECT 'referenced' AS kind, "filePath" AS v FROM "FingerprintImage"
       UNION ALL SELECT 'referenced', "filePath" FROM "AppearanceImage"
       UNION ALL SELECT 'dangling', f.id FROM "FingerprintImage" f LEFT JOIN "CaptureSession" s ON s.id = f."sessionId" WHERE s.id IS NULL`,
    );
    expect(rows.filter((r) => r.kind === "dangling")).toEqual([]);
    const referenced = new Set(rows.map((r) => r.v));
    const orphans = onDisk.filter((f) => !referenced.has(f));
    expect(orphans).toEqual([]);
  }, RACE_TEST_TIMEOUT_MS);
}

beforeAll(async () => {
  await buildOnce();
}, 600_000);

describe("races over HTTP, embedded PGlite", () => raceSuite("pglite"));

describe("races over HTTP, PostgreSQL", () => raceSuite("postgres"));
