import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, codeOf, modeServer, type ModeServer } from "@/lab/test-support/api";
import { routesFromOpenApi, type Route } from "@/lab/test-support/hostile-input";
import { appearanceJpeg, noseCapture } from "@/lab/test-support/nose-images";
import { buildOnce, ops, opsWithInput } from "@/lab/test-support/server";

// Security properties of the API over HTTP: tenants never reach each other's data on any route,
// keys and passwords never reach the log, a key is rate limited with the documented 429, and image
// files are never served.

interface Fixtures {
  noses: Buffer[];
  appearance: Buffer;
}

/** Everything account A owns, one of each kind, with the sessions in the state each route needs. */
async function ownerWorld(api: ReturnType<typeof apiCaller>, fx: Fixtures) {
  const finished = async (purpose: string, petId: string | undefined, n: number) => {
    const id = await api.createSession(purpose, petId);
    for (const nose of fx.noses.slice(0, n)) expect((await api.upload("fingerprints", id, nose)).status).toBe(201);
    expect((await api.upload("appearances", id, fx.appearance)).status).toBe(201);
    return id;
  };
  const petId = await api.createPet();
  const regSession = await finished("PET_PROFILE_REGISTRATION", petId, 5);
  const additionJob = (await api.call("POST", `/v2/pets/${petId}:addFingerprints`, { sessionId: regSession })).body!.data!.jobId!;
  expect(await api.pollJob("fingerprint-addition-jobs", additionJob)).toBe("SUCCESS");
  const verifyUsed = await finished("PET_VERIFICATION", petId, 3);
  const verificationJob = (await api.call("POST", `/v2/pets/${petId}:verify`, { sessionId: verifyUsed })).body!.data!.jobId!;
  const identifyUsed = await finished("PET_IDENTIFICATION", undefined, 3);
  const identificationJob = (await api.call("POST", "/v2/pets:identify", { sessionId: identifyUsed })).body!.data!.jobId!;
  await api.pollJob("verification-jobs", verificationJob);
  await api.pollJob("identification-jobs", identificationJob);
  return {
    petId,
    // Unused, finished sessions: with the owner's key each of these starts a job.
    sessions: {
      PET_PROFILE_REGISTRATION: await finished("PET_PROFILE_REGISTRATION", petId, 5),
      PET_VERIFICATION: await finished("PET_VERIFICATION", petId, 3),
      PET_IDENTIFICATION: await finished("PET_IDENTIFICATION", undefined, 3),
    },
    openSession: await api.createSession("PET_VERIFICATION", petId),
    jobs: { "fingerprint-addition-jobs": additionJob, "verification-jobs": verificationJob, "identification-jobs": identificationJob },
  };
}

type World = Awaited<ReturnType<typeof ownerWorld>>;

/** The session of the purpose a route works with, by the verb in its path. */
function sessionFor(route: Route, world: World): string {
  if (route.path.includes(":addFingerprints")) return world.sessions.PET_PROFILE_REGISTRATION;
  if (route.path.includes(":verify")) return world.sessions.PET_VERIFICATION;
  if (route.path.includes(":identify")) return world.sessions.PET_IDENTIFICATION;
  return world.openSession;
}

/**
 * The foreign ids a route's path takes. A parameter this does not know fails the walk: a new
 * route with a new kind of id must be added here, so that it is walked too.
 */
function pathWithIds(route: Route, world: World): string {
  return route.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
    if (name === "petId") return world.petId;
    if (name === "sessionId") return sessionFor(route, world);
    if (name === "jobId") {
      const kind = Object.keys(world.jobs).find((k) => route.path.startsWith(`/v2/${k}/`)) as keyof World["jobs"] | undefined;
      if (!kind) throw new Error(`no job of the kind of ${route.path}`);
      return world.jobs[kind];
    }
    throw new Error(`tenant walk: unknown path parameter {${name}} in ${route.method} ${route.path}`);
  });
}

/** A body that would succeed for the owner: every id in it is the owner's. */
function bodyWithIds(route: Route, world: World): unknown {
  if (route.path === "/v2/capture-sessions") return { species: "DOG", purpose: "PET_VERIFICATION", petId: world.petId };
  if (route.method === "PATCH") return { metadata: '{"by":"intruder"}', breed: "intruder" };
  return { sessionId: sessionFor(route, world), petId: world.petId, species: "DOG", metadata: "{}" };
}

function securitySuite(mode: "pglite" | "postgres") {
  let env: ModeServer;
  let fx: Fixtures;
  let owner: { accountId: string; apiKey: string };
  let intruder: { accountId: string; apiKey: string };

  beforeAll(async () => {
    fx = { noses: await Promise.all([0, 1, 2, 3, 4].map((i) => noseCapture(41, i))), appearance: await appearanceJpeg(7) };
    env = await modeServer(mode, "security", { env: { LOG_LEVEL: "info", API_RATE_LIMIT_PER_SECOND: "5", API_RATE_LIMIT_BURST: "150" } });
    owner = await env.account("Owner");
    intruder = await env.account("Intruder");
  });

  afterAll(async () => {
    await env?.close();
  });

  it("walks every route of the OpenAPI document with another account's ids: 404 like a missing resource, never data, nothing changed", async () => {
    const ownerApi = apiCaller(() => env.server.baseUrl, owner.apiKey);
    const intruderApi = apiCaller(() => env.server.baseUrl, intruder.apiKey);
    const world = await ownerWorld(ownerApi, fx);
    const intruderPet = await intruderApi.createPet();
    const ownerIds = [world.petId, ...Object.values(world.sessions), world.openSession, ...Object.values(world.jobs)];
    const routes = await routesFromOpenApi(env.server.baseUrl);
    const walked: string[] = [];
    for (const route of routes) {
      const takesIds = /\{/.test(route.path) || route.body === "multipart" || (route.body === "json" && route.path !== "/v2/pets");
      const urlPath = pathWithIds(route, world) + (route.body === "multipart" ? `?sessionId=${world.openSession}` : "");
      const answers =
        route.body === "multipart"
          ? [await intruderApi.upload(route.path.includes("fingerprints") ? "fingerprints" : "appearances", world.openSession, fx.noses[0])]
          : [await intruderApi.call(route.method, urlPath, route.body === "json" ? bodyWithIds(route, world) : undefined)];
      // A route taking a pet and a session: the intruder's own pet with the owner's session too.
      if (route.path.includes("{petId}:") && route.body === "json") {
        answers.push(await intruderApi.call(route.method, route.path.replace("{petId}", intruderPet), bodyWithIds(route, world)));
      }
      for (const answer of answers) {
        const text = JSON.stringify(answer.body ?? "");
        for (const id of ownerIds) expect(text, `${route.method} ${route.path} leaked ${id}`).not.toContain(id);
        if (takesIds) {
          expect(answer.status, `${route.method} ${route.path}: ${text}`).toBe(404);
          expect(codeOf(answer), route.path).toMatch(/^SERVICEB2B(20000|20004|20005|20006|20010)$/);
        } else {
          expect(answer.status, `${route.method} ${route.path}`).toBeLessThan(300);
        }
      }
      walked.push(`${route.method} ${route.path}`);
    }
    expect(walked).toHaveLength(routes.length);
    expect(routes.length).toBeGreaterThanOrEqual(11);

    // Nothing of the owner's changed: the pet, and each unused session still starts its job.
    const pet = await ownerApi.call("GET", `/v2/pets/${world.petId}`);
    expect(pet.body!.data).toMatchObject({ metadata: "{}", breed: null, hasFingerprint: true });
    expect((await ownerApi.upload("fingerprints", world.openSession, fx.noses[1])).status).toBe(201);
    expect((await ownerApi.call("POST", `/v2/pets/${world.petId}:verify`, { sessionId: world.sessions.PET_VERIFICATION })).status).toBe(202);
    expect((await ownerApi.call("POST", "/v2/pets:identify", { sessionId: world.sessions.PET_IDENTIFICATION })).status).toBe(202);
    expect((await ownerApi.call("POST", `/v2/pets/${world.petId}:addFingerprints`, { sessionId: world.sessions.PET_PROFILE_REGISTRATION })).status).toBe(202);
    // The intruder's list holds only its own pets (the walk's create made one more).
    const list = await intruderApi.call("GET", "/v2/pets");
    const listed = (list.body!.data as unknown as { id: string }[]).map((p) => p.id);
    expect(listed).toContain(intruderPet);
    expect(listed).not.toContain(world.petId);
  }, 300_000);

  if (mode === "pglite") {
    it("never writes API keys or passwords to the log, and stores only key hashes", async () => {
      const password = "correct horse battery staple 42";
      await opsWithInput(env.server.env, password, "user:create", "--email", "owner@example.test", "--password-stdin", "--role", "owner", "--account", owner.accountId);
      const api = apiCaller(() => env.server.baseUrl, owner.apiKey);
      await api.call("GET", "/v2/pets");
      await api.call("GET", "/v2/pets/%00"); // a validation error
      await api.call("GET", "/v2/nowhere"); // an unknown route
      await apiCaller(() => env.server.baseUrl, `${owner.apiKey}x`).call("GET", "/v2/pets"); // a wrong key
      await fetch(`${env.server.baseUrl}/v2/pets`, { method: "POST", headers: { "x-service-api-key": owner.apiKey, "content-type": "application/json" }, body: "{" });
      const log = env.server.log();
      expect(log.length).toBeGreaterThan(0);
      // Nor any long piece of them (a key logged truncated or in another case).
      for (const secret of [owner.apiKey, intruder.apiKey, password]) {
        for (let i = 0; i + 12 <= secret.length; i += 6) expect(log.toLowerCase()).not.toContain(secret.slice(i, i + 12).toLowerCase());
      }
      const rows = await env.sql<Record<string, unknown>>(`SELECT * FROM "ApiKey"`);
      const dump = JSON.stringify(rows) + JSON.stringify(await env.sql(`SELECT * FROM "User"`));
      for (const secret of [owner.apiKey, intruder.apiKey, password]) expect(dump).not.toContain(secret.slice(3, 20));
      expect(rows.length).toBeGreaterThanOrEqual(2);
    }, 180_000);

    it("rate limits per key with 429 10429 and Retry-After; other keys are not affected", async () => {
      // This suite's server allows 5 per second with a burst of 150: spend the burst, then some.
      const hits = await Promise.all(
        Array.from({ length: 300 }, () => fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": intruder.apiKey } })),
      );
      const limited = hits.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(20);
      expect(hits.filter((r) => r.status !== 429 && r.status !== 200)).toEqual([]);
      const body = await limited[0].json();
      expect(body).toEqual({ errors: [{ code: "SERVICEB2B10429" }] });
      const retryAfter = Number(limited[0].headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect((await fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": owner.apiKey } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, retryAfter * 1000));
      expect((await fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": intruder.apiKey } })).status).toBe(200);
    }, 120_000);

    it("never serves an uploaded image file, with or without a key, by any path", async () => {
      const api = apiCaller(() => env.server.baseUrl, owner.apiKey);
      const pet = await api.createPet();
      const session = await api.createSession("PET_VERIFICATION", pet);
      const uploaded = await api.upload("fingerprints", session, fx.noses[2]);
      expect(uploaded.status).toBe(201);
      const [row] = await env.sql<{ filePath: string }>(`SELECT "filePath" FROM "FingerprintImage" WHERE id = '${uploaded.body!.data!.id}'`);
      const candidates = [
        `/${row.filePath}`,
        `/data/${row.filePath}`,
        `/v2/${row.filePath}`,
        `/v2/../${row.filePath}`,
        `/_next/static/../../${row.filePath}`,
        `/_next/image?url=${encodeURIComponent(`/${row.filePath}`)}&w=64&q=75`,
        `/v2/fingerprints/${uploaded.body!.data!.id}`,
        `/v2/capture-sessions/${session}`,
      ];
      for (const candidate of candidates) {
        for (const headers of [{}, { "x-service-api-key": owner.apiKey }] as Record<string, string>[]) {
          const res = await fetch(env.server.baseUrl + candidate, { headers, redirect: "follow" });
          const bytes = Buffer.from(await res.arrayBuffer());
          expect(res.headers.get("content-type") ?? "", candidate).not.toMatch(/^image\//);
          expect(bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])), candidate).toBe(false);
        }
      }
    }, 180_000);

    it("brakes invalid-key guessing per client address with 429 10429, while a key already known keeps working", async () => {
      // Default brake: 100 lookups that miss the key cache at once, then 10 per second.
      const guess = () => `rk_${randomBytes(32).toString("base64url")}`;
      expect((await fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": owner.apiKey } })).status).toBe(200);
      const hits = await Promise.all(Array.from({ length: 250 }, () => fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": guess() } })));
      const statuses = hits.map((r) => r.status);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(100);
      expect(statuses.filter((s) => s !== 429 && s !== 401)).toEqual([]);
      const limited = hits.find((r) => r.status === 429)!;
      expect(await limited.json()).toEqual({ errors: [{ code: "SERVICEB2B10429" }] });
      expect((await fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": owner.apiKey } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, Number(limited.headers.get("retry-after")) * 1000 + 200));
      expect((await fetch(`${env.server.baseUrl}/v2/pets`, { headers: { "x-service-api-key": guess() } })).status).toBe(401);
    }, 60_000);
  }
}

beforeAll(async () => {
  await buildOnce();
}, 600_000);

describe("API security over HTTP, embedded PGlite", () => securitySuite("pglite"));

describe("API security over HTTP, PostgreSQL", () => securitySuite("postgres"));
