import type { Species } from "@/lib/generated/prisma/enums";
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RhinariumClient } from "@rhinarium/sdk";
import { appearanceJpeg, blurredNoseCapture, flatJpeg, noseCapture } from "@/lab/test-support/nose-images";
import { adminSql, buildOnce, ensurePostgres, ops, opsWithInput, PG_ADMIN_URL, startServer, type TestServer } from "@/lab/test-support/server";

// The contract, driven over HTTP against the production build (the server `npm start` runs), in both database
// modes. Responses are parsed with strict schemas: an extra field on the wire fails the test.

/** Tests that restart the server: each start is seconds, and more on a machine busy with other builds. */
const RESTARTING_TEST_TIMEOUT_MS = 180_000;

const errorBodySchema = z.strictObject({
  errors: z
    .array(z.strictObject({ code: z.string().regex(/^SERVICEB2B\d{5}$/), details: z.record(z.string(), z.array(z.string())).optional() }))
    .length(1),
});
const envelope = <T extends z.ZodType>(data: T) => z.strictObject({ success: z.literal(true), data });
const idData = envelope(z.strictObject({ id: z.string().min(1) }));
const jobData = envelope(z.strictObject({ jobId: z.string().min(1) }));
const petData = z.strictObject({
  id: z.string(),
  species: z.enum(["DOG", "CAT"]),
  breed: z.string().nullable(),
  metadata: z.string().nullable(),
  hasFingerprint: z.boolean(),
  createdAt: z.iso.datetime(),
});
const statusOnly = envelope(z.strictObject({ status: z.enum(["PENDING", "SUCCESS", "FAILED"]) }));
const verificationDone = envelope(z.strictObject({ status: z.literal("SUCCESS"), isVerified: z.boolean(), score: z.number().min(0).max(100) }));
const identificationDone = envelope(
  z.strictObject({
    status: z.literal("SUCCESS"),
    pets: z.array(z.strictObject({ id: z.string(), score: z.number().min(0).max(100), metadata: z.string().nullable() })),
  }),
);

interface Fixtures {
  enrol: Buffer[][]; // enrol[pet][i], 5 captures per pet
  probe: Buffer[][]; // probe[pet][i], 3 other captures
  blurred: Buffer[];
  appearance: Buffer;
  flat: Buffer;
  png: Buffer;
}

async function makeFixtures(): Promise<Fixtures> {
  const pets = [1, 2];
  return {
    enrol: await Promise.all(pets.map((p) => Promise.all([0, 1, 2, 3, 4].map((i) => noseCapture(p, i))))),
    probe: await Promise.all(pets.map((p) => Promise.all([5, 6, 7].map((i) => noseCapture(p, i))))),
    blurred: await Promise.all([0, 1, 2, 3, 4].map((i) => blurredNoseCapture(3, i))),
    appearance: await appearanceJpeg(),
    flat: await flatJpeg(),
    png: Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex"),
  };
}

function contractSuite(mode: "pglite" | "postgres") {
  let server: TestServer;
  let fx: Fixtures;
  let keyA: string;
  let keyB: string;
  let accountA: string;
  let accountB: string;
  const databaseName = `rhinarium_contract_${process.pid}_${Date.now()}`;
  let databaseUrl: string | undefined;

  /** Stops the server and starts it again on the same database and data folder. */
  async function restart(jobRunner: "embedded" | "none" = "embedded", signal: NodeJS.Signals = "SIGTERM") {
    const exitCode = await server.stop(signal);
    server = await startServer({ dataDir: server.dataDir, databaseUrl, jobRunner });
    return exitCode;
  }

  async function call(method: string, urlPath: string, opts: { key?: string | null; json?: unknown; raw?: string; form?: FormData } = {}) {
    const headers: Record<string, string> = {};
    const key = opts.key === undefined ? keyA : opts.key;
    if (key) headers["x-service-api-key"] = key;
    let body: BodyInit | undefined;
    if (opts.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(opts.json);
    } else if (opts.raw !== undefined) {
      headers["content-type"] = "application/json";
      body = opts.raw;
    } else body = opts.form;
    const res = await fetch(server.baseUrl + urlPath, { method, headers, body });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  async function expectError(p: Promise<{ status: number; body: unknown }>, status: number, digits: string) {
    const res = await p;
    expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { errors: [{ code: `SERVICEB2B${digits}` }] } });
    return errorBodySchema.parse(res.body).errors[0];
  }

  function fileForm(bytes: Buffer, field = "file") {
    const form = new FormData();
    form.append(field, new Blob([bytes as BlobPart], { type: "image/jpeg" }), "x.jpg");
    return form;
  }

  const upload = (kind: "fingerprints" | "appearances", sessionId: string, bytes: Buffer, key?: string) =>
    call("POST", `/v2/${kind}:upload?sessionId=${encodeURIComponent(sessionId)}`, { form: fileForm(bytes), key });

  async function createPet(species: Species = "DOG", metadata = '{"name":"Rex"}', key = keyA) {
    const res = await call("POST", "/v2/pets", { json: { species, metadata }, key });
    expect(res.status).toBe(201);
    return idData.parse(res.body).data.id;
  }

  async function createSession(body: Record<string, unknown>, key = keyA) {
    const res = await call("POST", "/v2/capture-sessions", { json: body, key });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return idData.parse(res.body).data.id;
  }

  /** A finished session: the given nose images plus one appearance image. */
  async function capturedSession(body: Record<string, unknown>, noses: Buffer[], key = keyA) {
    const id = await createSession(body, key);
    for (const nose of noses) expect((await upload("fingerprints", id, nose, key)).status).toBe(201);
    expect((await upload("appearances", id, fx.appearance, key)).status).toBe(201);
    return id;
  }

  async function pollJob(kind: string, jobId: string, key = keyA) {
    for (let i = 0; i < 150; i++) {
      const res = await call("GET", `/v2/${kind}/${jobId}`, { key });
      expect(res.status).toBe(200);
      const data = (res.body as { data: { status: string } }).data;
      if (data.status !== "PENDING") return res.body;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`job ${jobId} stayed PENDING`);
  }

  beforeAll(async () => {
    fx = await makeFixtures();
    if (mode === "postgres") {
      await ensurePostgres();
      await adminSql(`CREATE DATABASE ${databaseName}`);
      databaseUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
    }
    server = await startServer({ databaseUrl });
    const a = await ops(server.env, "account:create", "--name", "Clinic A", "--plan", "standard");
    const b = await ops(server.env, "account:create", "--name", "Clinic B", "--plan", "standard");
    accountA = a.accountId as string;
    keyA = a.apiKey as string;
    accountB = b.accountId as string;
    keyB = b.apiKey as string;
  });

  afterAll(async () => {
    await server?.stop();
    if (mode === "postgres") await adminSql(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    // Images live in DATA_DIR in both modes.
    if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
  });

  it("authenticates every call: 401 10000 for a missing, wrong or deactivated key", async () => {
    await expectError(call("GET", "/v2/pets", { key: null }), 401, "10000");
    await expectError(call("GET", "/v2/pets", { key: "rk_wrong" }), 401, "10000");
    await expectError(call("POST", "/v2/pets", { key: null, json: { species: "DOG" } }), 401, "10000");
    const c = await ops(server.env, "account:create", "--name", "Clinic C", "--plan", "demo");
    const oldKey = c.apiKey as string;
    expect((await call("GET", "/v2/pets", { key: oldKey })).status).toBe(200);
    const { apiKey: newKey } = (await ops(server.env, "key:reissue", c.accountId as string)) as { apiKey: string };
    await expectError(call("GET", "/v2/pets", { key: oldKey }), 401, "10000");
    expect((await call("GET", "/v2/pets", { key: newKey })).status).toBe(200);
    await ops(server.env, "key:deactivate", c.accountId as string);
    await expectError(call("GET", "/v2/pets", { key: newKey }), 401, "10000");
  });

  it("refuses a suspended account with 403 10010 on every call, until reinstated", async () => {
    const c = await ops(server.env, "account:create", "--name", "Late payer", "--plan", "standard");
    const key = c.apiKey as string;
    await ops(server.env, "account:suspend", c.accountId as string);
    await expectError(call("GET", "/v2/pets", { key }), 403, "10010");
    await expectError(call("POST", "/v2/pets", { key, json: { species: "DOG" } }), 403, "10010");
    await expectError(call("POST", "/v2/pets:identify", { key, json: { sessionId: "x" } }), 403, "10010");
    await ops(server.env, "account:reinstate", c.accountId as string);
    expect((await call("GET", "/v2/pets", { key })).status).toBe(200);
  });

  it("serves the generated OpenAPI document, equal to the committed one, without a key", async () => {
    const res = await fetch(`${server.baseUrl}/v2/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(fs.readFileSync("docs/openapi.json", "utf8")));
  });

  it("reports operator mistakes as one JSON object", async () => {
    expect(await ops(server.env, "account:plan", "no-such-account", "standard")).toEqual({ error: "no account no-such-account" });
    expect(await ops(server.env, "plan:upsert", "gold", "--pet-limit", "lots", "--identification", "yes")).toHaveProperty("error");
    expect(await ops(server.env, "plan:upsert", "gold", "--pet-limit", "unlimited", "--identification", "yes")).toEqual({
      plan: { name: "gold", petLimit: null, identification: true },
    });
    const user = await opsWithInput(server.env, "correct horse battery\n", "user:create", "--email", "Vet@Clinic.test", "--password-stdin", "--role", "staff", "--account", accountA);
    expect(user).toMatchObject({ email: "vet@clinic.test", role: "staff" });
    expect(await opsWithInput(server.env, "correct horse battery", "user:create", "--email", "x@clinic.test", "--password-stdin", "--role", "staff")).toHaveProperty("error");
    const { plans } = (await ops(server.env, "seed")) as { plans: { name: string }[] };
    expect(plans.map((p) => p.name)).toEqual(expect.arrayContaining(["basic", "demo", "standard"]));
  });

  it("answers an unknown route with 404 10404, after authentication", async () => {
    await expectError(call("GET", "/v2/unknown"), 404, "10404");
    await expectError(call("PUT", "/v2/pets"), 404, "10404");
    await expectError(call("GET", "/v2/unknown", { key: null }), 401, "10000");
  });

  it("creates, lists, reads, updates and deletes pets", async () => {
    const res = await call("POST", "/v2/pets", { json: { species: "CAT", breed: "Siamese", metadata: '{"owner":"Ann"}' } });
    expect(res.status).toBe(201);
    const id = idData.parse(res.body).data.id;
    const bare = idData.parse((await call("POST", "/v2/pets", { json: { species: "DOG" } })).body).data.id;
    const got = await call("GET", `/v2/pets/${id}`);
    expect(got.status).toBe(200);
    expect(envelope(petData).parse(got.body).data).toMatchObject({ id, species: "CAT", breed: "Siamese", metadata: '{"owner":"Ann"}', hasFingerprint: false });
    expect(envelope(petData).parse((await call("GET", `/v2/pets/${bare}`)).body).data).toMatchObject({ breed: null, metadata: null });

    const list = envelope(z.array(petData)).parse((await call("GET", "/v2/pets")).body).data;
    const ids = list.map((p) => p.id);
    expect(ids.indexOf(id)).toBeLessThan(ids.indexOf(bare)); // oldest first
    const times = list.map((p) => p.createdAt);
    expect([...times].sort()).toEqual(times);

    const patched = await call("PATCH", `/v2/pets/${id}`, { json: { metadata: '{"owner":"Bob"}', breed: "Thai" } });
    expect(patched.status).toBe(200);
    expect(envelope(z.strictObject({ isSuccessful: z.literal(true) })).parse(patched.body)).toBeTruthy();
    expect(envelope(petData).parse((await call("GET", `/v2/pets/${id}`)).body).data).toMatchObject({ metadata: '{"owner":"Bob"}', breed: "Thai" });

    const deleted = await call("DELETE", `/v2/pets/${id}`);
    expect(deleted).toEqual({ status: 204, body: undefined });
    await expectError(call("GET", `/v2/pets/${id}`), 404, "20000");
    await expectError(call("DELETE", `/v2/pets/${id}`), 404, "20000");
    await expectError(call("PATCH", `/v2/pets/${id}`, { json: { metadata: "{}" } }), 404, "20000");
    await expectError(call("GET", "/v2/pets/no-such-pet"), 404, "20000");
  });

  it("validates input with 400 10001 and names every failing field", async () => {
    const e1 = await expectError(call("POST", "/v2/pets", { json: { species: "COW", metadata: "{not json", breed: 5 } }), 400, "10001");
    expect(Object.keys(e1.details!).sort()).toEqual(["breed", "metadata", "species"]);
    expect(e1.details!.species[0]).toMatch(/DOG or CAT/);
    const e2 = await expectError(call("POST", "/v2/pets", { json: {} }), 400, "10001");
    expect(Object.keys(e2.details!)).toEqual(["species"]);
    const e3 = await expectError(call("POST", "/v2/pets", { raw: "{oops" }), 400, "10001");
    expect(Object.keys(e3.details!)).toEqual(["body"]);
    const e4 = await expectError(call("POST", "/v2/pets", { json: { species: "DOG", metadata: JSON.stringify("x".repeat(16_400)) } }), 400, "10001");
    expect(Object.keys(e4.details!)).toEqual(["metadata"]);
    const e5 = await expectError(call("POST", "/v2/pets", { json: { species: "DOG", metadata: "x".repeat(70_000) } }), 400, "10001");
    expect(Object.keys(e5.details!)).toEqual(["body"]);
    const pet = await createPet();
    const e6 = await expectError(call("PATCH", `/v2/pets/${pet}`, { json: { breed: "Lab" } }), 400, "10001");
    expect(Object.keys(e6.details!)).toEqual(["metadata"]);
    const e7 = await expectError(call("POST", "/v2/capture-sessions", { json: { species: "DOG", purpose: "FUN" } }), 400, "10001");
    expect(Object.keys(e7.details!)).toEqual(["purpose"]);
    const e8 = await expectError(call("POST", `/v2/pets/${pet}:verify`, { json: {} }), 400, "10001");
    expect(Object.keys(e8.details!)).toEqual(["sessionId"]);
  });

  it("enforces the demo plan's pet limit with 402 10005", async () => {
    const demo = await ops(server.env, "account:create", "--name", "Demo", "--plan", "demo");
    const key = demo.apiKey as string;
    for (let i = 0; i < 5; i++) expect((await call("POST", "/v2/pets", { key, json: { species: "DOG" } })).status).toBe(201);
    await expectError(call("POST", "/v2/pets", { key, json: { species: "DOG" } }), 402, "10005");
    await ops(server.env, "account:plan", demo.accountId as string, "standard");
    expect((await call("POST", "/v2/pets", { key, json: { species: "DOG" } })).status).toBe(201);
  });

  it("creates capture sessions with the purpose rules (20011, 20000)", async () => {
    const pet = await createPet();
    await expectError(call("POST", "/v2/capture-sessions", { json: { species: "DOG", purpose: "PET_PROFILE_REGISTRATION" } }), 400, "20011");
    await expectError(call("POST", "/v2/capture-sessions", { json: { species: "DOG", purpose: "PET_VERIFICATION" } }), 400, "20011");
    await expectError(call("POST", "/v2/capture-sessions", { json: { species: "DOG", purpose: "PET_VERIFICATION", petId: "nope" } }), 404, "20000");
    await createSession({ species: "DOG", purpose: "PET_IDENTIFICATION" });
    await createSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: pet });
  });

  it("accepts JPEG uploads only, by content, into a live session", async () => {
    const pet = await createPet();
    const session = await createSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet });
    const ok = await upload("fingerprints", session, fx.enrol[0][0]);
    expect(ok.status).toBe(201);
    idData.parse(ok.body);
    const notJpeg = await expectError(upload("fingerprints", session, fx.png), 400, "10001");
    expect(Object.keys(notJpeg.details!)).toEqual(["file"]);
    const blank = await expectError(upload("fingerprints", session, fx.flat), 400, "10001");
    expect(Object.keys(blank.details!)).toEqual(["file"]);
    const appearanceNotJpeg = await expectError(upload("appearances", session, fx.png), 400, "10001");
    expect(Object.keys(appearanceNotJpeg.details!)).toEqual(["file"]);
    const missingFile = await expectError(
      call("POST", `/v2/fingerprints:upload?sessionId=${session}`, { form: fileForm(fx.enrol[0][0], "picture") }),
      400,
      "10001",
    );
    expect(Object.keys(missingFile.details!)).toEqual(["file"]);
    const noSession = await expectError(call("POST", "/v2/fingerprints:upload", { form: fileForm(fx.enrol[0][0]) }), 400, "10001");
    expect(Object.keys(noSession.details!)).toEqual(["sessionId"]);
    const tooLarge = Buffer.concat([fx.enrol[0][0], Buffer.alloc(10 * 1024 * 1024)]);
    const big = await expectError(upload("fingerprints", session, tooLarge), 400, "10001");
    expect(Object.keys(big.details!)).toEqual(["file"]);
    await expectError(upload("fingerprints", "no-such-session", fx.enrol[0][0]), 404, "20010");
    await expectError(upload("appearances", "no-such-session", fx.appearance), 404, "20010");
    const files = fs.readdirSync(path.join(server.dataDir, "images", accountA, session));
    expect(files).toHaveLength(1);
  });

  let enrolledPet: string;

  it("registers fingerprints: 20012 until finished, 202 + job, SUCCESS with status only, 20014 on reuse", async () => {
    enrolledPet = await createPet("DOG", '{"name":"Enrolled"}');
    const session = await createSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: enrolledPet });
    for (const nose of fx.enrol[0].slice(0, 4)) await upload("fingerprints", session, nose);
    await expectError(call("POST", `/v2/pets/${enrolledPet}:addFingerprints`, { json: { sessionId: session } }), 400, "20012");
    await upload("fingerprints", session, fx.enrol[0][4]);
    // Five fingerprints but no appearance image: still not finished.
    await expectError(call("POST", `/v2/pets/${enrolledPet}:addFingerprints`, { json: { sessionId: session } }), 400, "20012");
    await upload("appearances", session, fx.appearance);
    const started = await call("POST", `/v2/pets/${enrolledPet}:addFingerprints`, { json: { sessionId: session } });
    expect(started.status).toBe(202);
    const { jobId } = jobData.parse(started.body).data;
    await expectError(call("POST", `/v2/pets/${enrolledPet}:addFingerprints`, { json: { sessionId: session } }), 400, "20014");
    await expectError(upload("fingerprints", session, fx.enrol[0][0]), 400, "20014");
    expect(statusOnly.parse(await pollJob("fingerprint-addition-jobs", jobId)).data.status).toBe("SUCCESS");
    expect(envelope(petData).parse((await call("GET", `/v2/pets/${enrolledPet}`)).body).data.hasFingerprint).toBe(true);
  });

  it("allows one running fingerprint addition per pet, also under concurrent starts (20007)", async () => {
    const pet = await createPet();
    const sessions = await Promise.all(
      [0, 1, 2, 3].map(() => capturedSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet }, fx.enrol[1])),
    );
    // A server that only records jobs (JOB_RUNNER=none, as a web process in front of workers would)
    // keeps the first addition PENDING for as long as the test needs.
    await restart("none");
    const results = await Promise.all(sessions.slice(0, 3).map((s) => call("POST", `/v2/pets/${pet}:addFingerprints`, { json: { sessionId: s } })));
    expect(results.map((r) => r.status).sort()).toEqual([202, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) expect(errorBodySchema.parse(r.body).errors[0].code).toBe("SERVICEB2B20007");
    await expectError(call("POST", `/v2/pets/${pet}:addFingerprints`, { json: { sessionId: sessions[3] } }), 400, "20007");
    const { jobId } = jobData.parse(results.find((r) => r.status === 202)!.body).data;
    expect(statusOnly.parse((await call("GET", `/v2/fingerprint-addition-jobs/${jobId}`)).body).data.status).toBe("PENDING");
    // Back with a runner: the PENDING job is resumed at start-up and finishes.
    expect(await restart("embedded")).toBe(0);
    expect(statusOnly.parse(await pollJob("fingerprint-addition-jobs", jobId)).data.status).toBe("SUCCESS");
    // The refused sessions were not consumed: once the addition finished, another may start.
    expect((await call("POST", `/v2/pets/${pet}:addFingerprints`, { json: { sessionId: sessions[3] } })).status).toBe(202);
  }, RESTARTING_TEST_TIMEOUT_MS);

  it("consumes a session once under concurrent starts (20014)", async () => {
    const session = await capturedSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet }, fx.probe[0]);
    const results = await Promise.all([0, 1, 2].map(() => call("POST", `/v2/pets/${enrolledPet}:verify`, { json: { sessionId: session } })));
    expect(results.map((r) => r.status).sort()).toEqual([202, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) expect(errorBodySchema.parse(r.body).errors[0].code).toBe("SERVICEB2B20014");
  });

  it("fails a registration of unusable images as FAILED with no reason on the wire, and keeps the reason internally", async () => {
    const pet = await createPet();
    const session = await capturedSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet }, fx.blurred);
    const { jobId } = jobData.parse((await call("POST", `/v2/pets/${pet}:addFingerprints`, { json: { sessionId: session } })).body).data;
    expect(statusOnly.parse(await pollJob("fingerprint-addition-jobs", jobId)).data).toEqual({ status: "FAILED" });
    const { job } = (await ops(server.env, "job:show", jobId)) as { job: { failureReason: { code: string; summary: string; images: unknown[] } } };
    expect(job.failureReason.code).toBe("INSUFFICIENT_USABLE_IMAGES");
    expect(job.failureReason.images).toHaveLength(5);
    expect(job.failureReason.summary).toMatch(/^out of focus or motion-blurred in 5 of 5 images \(0 usable, 3 needed\): /);
    expect(envelope(petData).parse((await call("GET", `/v2/pets/${pet}`)).body).data.hasFingerprint).toBe(false);
  });

  it("checks purpose (20013), species (20015), pet (20000) and enrolment (20009) at start", async () => {
    const cat = await createPet("CAT");
    const idSession = await createSession({ species: "DOG", purpose: "PET_IDENTIFICATION" });
    await expectError(call("POST", `/v2/pets/${enrolledPet}:addFingerprints`, { json: { sessionId: idSession } }), 400, "20013");
    await expectError(call("POST", `/v2/pets/${enrolledPet}:verify`, { json: { sessionId: idSession } }), 400, "20013");
    const verifySession = await createSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet });
    await expectError(call("POST", "/v2/pets:identify", { json: { sessionId: verifySession } }), 400, "20013");
    const dogSessionForCat = await createSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: cat });
    await expectError(call("POST", `/v2/pets/${cat}:addFingerprints`, { json: { sessionId: dogSessionForCat } }), 400, "20015");
    await expectError(call("POST", `/v2/pets/no-such-pet:verify`, { json: { sessionId: verifySession } }), 404, "20000");
    await expectError(call("POST", `/v2/pets/${enrolledPet}:verify`, { json: { sessionId: "no-such-session" } }), 404, "20010");
    const bare = await createPet();
    const session = await capturedSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: bare }, fx.probe[0]);
    await expectError(call("POST", `/v2/pets/${bare}:verify`, { json: { sessionId: session } }), 400, "20009");
    // No capture can fix a pet without a registered fingerprint: 20009 comes before the session's completeness (20012).
    const unfinished = await createSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: bare });
    await expectError(call("POST", `/v2/pets/${bare}:verify`, { json: { sessionId: unfinished } }), 400, "20009");
    // A session belongs to the pet it was made for: with another pet it does not exist.
    await expectError(call("POST", `/v2/pets/${enrolledPet}:verify`, { json: { sessionId: session } }), 404, "20010");
  });

  it("verifies 1:1 with the real engine: the same pet matches, another does not", async () => {
    const client = new RhinariumClient({ baseUrl: server.baseUrl, apiKey: keyA, pollIntervalMs: 200, maxPolls: 150 });
    const genuine = await capturedSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet }, fx.probe[0]);
    const { jobId } = await client.verifyPet(enrolledPet, genuine);
    const done = verificationDone.parse(await pollJob("verification-jobs", jobId)).data;
    expect(done.isVerified).toBe(true);
    const impostor = await capturedSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet }, fx.probe[1]);
    const other = await client.waitForVerification((await client.verifyPet(enrolledPet, impostor)).jobId);
    expect(other.status).toBe("SUCCESS");
    expect(other.isVerified).toBe(false);
    expect(other.score!).toBeLessThan(done.score);
    // The same nose photographed with the phone turned by a quarter: the job reads the probe images' files to try it
    // turned (decision 0029).
    const turnedProbe = await Promise.all(fx.probe[0].map((jpeg) => sharp(jpeg).rotate(90).jpeg({ quality: 95 }).toBuffer()));
    const turned = await capturedSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet }, turnedProbe);
    expect((await client.waitForVerification((await client.verifyPet(enrolledPet, turned)).jobId)).isVerified).toBe(true);
  });

  it("identifies 1:N within the plan rules (10012, 10011) and the configured pool (20016)", async () => {
    const noPlan = await ops(server.env, "account:create", "--name", "No plan");
    const idNoPlan = await createSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, noPlan.apiKey as string);
    await expectError(call("POST", "/v2/pets:identify", { key: noPlan.apiKey as string, json: { sessionId: idNoPlan } }), 402, "10012");
    await ops(server.env, "account:plan", noPlan.accountId as string, "basic");
    await expectError(call("POST", "/v2/pets:identify", { key: noPlan.apiKey as string, json: { sessionId: idNoPlan } }), 402, "10011");

    const probe = await capturedSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, fx.probe[0]);
    const started = await call("POST", "/v2/pets:identify", { json: { sessionId: probe } });
    expect(started.status).toBe(202);
    const found = identificationDone.parse(await pollJob("identification-jobs", jobData.parse(started.body).data.jobId)).data;
    expect(found.pets[0]).toMatchObject({ id: enrolledPet, metadata: '{"name":"Enrolled"}' });
    const scores = found.pets.map((p) => p.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // The same nose photographed upside down: found by the turned pass (decision 0029), on the quarter-turned views
    // the probe's uploads made (decision 0042): the search reads no probe file, so one lost meanwhile changes nothing.
    const upsideDown = await Promise.all(fx.probe[0].map((jpeg) => sharp(jpeg).rotate(180).jpeg({ quality: 95 }).toBuffer()));
    const turnedSession = await capturedSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, upsideDown);
    const sessionFolder = path.join(server.dataDir, "images", accountA, turnedSession);
    const probeFiles = fs.readdirSync(sessionFolder).filter((name) => name.startsWith("fingerprint-"));
    expect(probeFiles).toHaveLength(upsideDown.length);
    for (const name of probeFiles) fs.rmSync(path.join(sessionFolder, name));
    const turned = await call("POST", "/v2/pets:identify", { json: { sessionId: turnedSession } });
    const turnedFound = identificationDone.parse(await pollJob("identification-jobs", jobData.parse(turned.body).data.jobId)).data;
    expect(turnedFound.pets[0]?.id).toBe(enrolledPet);

    // An operator points the account at an empty pool: the search finds nobody.
    await ops(server.env, "pool:create", "--account", accountA, "--name", "north");
    await ops(server.env, "pool:assign", "--account", accountA, "--pool", "north");
    const probe2 = await capturedSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, fx.probe[0]);
    const inPool = await call("POST", "/v2/pets:identify", { json: { sessionId: probe2 } });
    expect(identificationDone.parse(await pollJob("identification-jobs", jobData.parse(inPool.body).data.jobId)).data.pets).toEqual([]);
    // The pool is removed while the account still points at it: 20016, and the session stays usable.
    await ops(server.env, "pool:delete", "--account", accountA, "--name", "north");
    const probe3 = await capturedSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, fx.probe[0]);
    await expectError(call("POST", "/v2/pets:identify", { json: { sessionId: probe3 } }), 404, "20016");
    await ops(server.env, "pool:assign", "--account", accountA, "--pool", "default");
    expect((await call("POST", "/v2/pets:identify", { json: { sessionId: probe3 } })).status).toBe(202);
  });

  it("answers unknown jobs with the kind's 404 (20004, 20005, 20006)", async () => {
    await expectError(call("GET", "/v2/fingerprint-addition-jobs/nope"), 404, "20004");
    await expectError(call("GET", "/v2/verification-jobs/nope"), 404, "20005");
    await expectError(call("GET", "/v2/identification-jobs/nope"), 404, "20006");
  });

  it("isolates tenants: another account's pet, session or job is 404, never 403, never data", async () => {
    const session = await createSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet });
    const regSession = await capturedSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: enrolledPet }, fx.enrol[0]);
    const { jobId } = jobData.parse((await call("POST", `/v2/pets/${enrolledPet}:addFingerprints`, { json: { sessionId: regSession } })).body).data;
    await pollJob("fingerprint-addition-jobs", jobId);

    await expectError(call("GET", `/v2/pets/${enrolledPet}`, { key: keyB }), 404, "20000");
    await expectError(call("PATCH", `/v2/pets/${enrolledPet}`, { key: keyB, json: { metadata: "{}" } }), 404, "20000");
    await expectError(call("DELETE", `/v2/pets/${enrolledPet}`, { key: keyB }), 404, "20000");
    await expectError(call("POST", "/v2/capture-sessions", { key: keyB, json: { species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet } }), 404, "20000");
    await expectError(upload("fingerprints", session, fx.probe[0][0], keyB), 404, "20010");
    await expectError(call("POST", `/v2/pets/${enrolledPet}:verify`, { key: keyB, json: { sessionId: session } }), 404, "20000");
    const bPet = await createPet("DOG", "{}", keyB);
    await expectError(call("POST", `/v2/pets/${bPet}:verify`, { key: keyB, json: { sessionId: session } }), 404, "20010");
    await expectError(call("GET", `/v2/fingerprint-addition-jobs/${jobId}`, { key: keyB }), 404, "20004");
    const list = envelope(z.array(petData)).parse((await call("GET", "/v2/pets", { key: keyB })).body).data;
    expect(list.map((p) => p.id)).toEqual([bPet]);
    // B's identification never sees A's pets.
    const probe = await capturedSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, fx.probe[0], keyB);
    const started = await call("POST", "/v2/pets:identify", { key: keyB, json: { sessionId: probe } });
    const found = identificationDone.parse(await pollJob("identification-jobs", jobData.parse(started.body).data.jobId, keyB)).data;
    expect(found.pets).toEqual([]);
    await expectError(call("GET", `/v2/identification-jobs/${jobData.parse(started.body).data.jobId}`), 404, "20006");
  });

  it("deletes a pet with its images and files; it is no longer identified", async () => {
    const pet = await createPet("DOG", '{"name":"Gone"}');
    const reg = await capturedSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet }, fx.enrol[1]);
    const { jobId } = jobData.parse((await call("POST", `/v2/pets/${pet}:addFingerprints`, { json: { sessionId: reg } })).body).data;
    expect(statusOnly.parse(await pollJob("fingerprint-addition-jobs", jobId)).data.status).toBe("SUCCESS");
    const folder = path.join(server.dataDir, "images", accountA, reg);
    expect(fs.readdirSync(folder).length).toBe(6);
    expect((await call("DELETE", `/v2/pets/${pet}`)).status).toBe(204);
    expect(fs.existsSync(folder)).toBe(false);
    await expectError(call("GET", `/v2/fingerprint-addition-jobs/${jobId}`), 404, "20004");
    const probe = await capturedSession({ species: "DOG", purpose: "PET_IDENTIFICATION" }, fx.probe[1]);
    const started = await call("POST", "/v2/pets:identify", { json: { sessionId: probe } });
    const found = identificationDone.parse(await pollJob("identification-jobs", jobData.parse(started.body).data.jobId)).data;
    expect(found.pets.map((p) => p.id)).not.toContain(pet);
  });

  it("meters every call by account, route template and status", async () => {
    await call("GET", "/v2/pets/metered-miss");
    const { usage } = (await ops(server.env, "usage", accountA)) as { usage: { route: string; status: number; calls: number }[] };
    expect(usage).toContainEqual(expect.objectContaining({ route: "GET /v2/pets/{petId}", status: 404 }));
    expect(usage).toContainEqual(expect.objectContaining({ route: "POST /v2/pets/{petId}:addFingerprints", status: 202 }));
    expect(usage).toContainEqual(expect.objectContaining({ route: "UNMATCHED", status: 404 }));
  });

  it("keeps the usage rows still buffered when the server stops on SIGTERM", async () => {
    const misses = async () => {
      const { usage } = (await ops(server.env, "usage", accountA)) as { usage: { route: string; status: number; calls: number }[] };
      return usage.find((u) => u.route === "GET /v2/pets/{petId}" && u.status === 404)?.calls ?? 0;
    };
    const before = await misses();
    for (let i = 0; i < 3; i++) await call("GET", `/v2/pets/buffered-miss-${i}`);
    // Stopped at once: the rows are at most 100 ms old, so the shutdown's flush is what writes them.
    expect(await restart()).toBe(0);
    expect(await misses()).toBe(before + 3);
  }, RESTARTING_TEST_TIMEOUT_MS);

  if (mode === "postgres") {
    it("treats an expired session as missing (20010)", async () => {
      const pet = await createPet();
      const session = await capturedSession({ species: "DOG", purpose: "PET_VERIFICATION", petId: enrolledPet }, fx.probe[0]);
      const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${databaseName}`);
      await adminSql(`UPDATE "CaptureSession" SET "expiresAt" = now() - interval '1 second' WHERE id = '${session}'`, url);
      await expectError(call("POST", `/v2/pets/${enrolledPet}:verify`, { json: { sessionId: session } }), 404, "20010");
      await expectError(upload("fingerprints", session, fx.probe[0][0]), 404, "20010");
      expect(pet).toBeTruthy();
    });
  }

  if (mode === "pglite") {
    it("survives a crash (stale owner lock, PENDING job resumed) and releases the database on SIGTERM", async () => {
      const pet = await createPet();
      const reg = await capturedSession({ species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet }, fx.enrol[1]);
      await restart("none");
      const { jobId } = jobData.parse((await call("POST", `/v2/pets/${pet}:addFingerprints`, { json: { sessionId: reg } })).body).data;
      await restart("embedded", "SIGKILL");
      expect(statusOnly.parse(await pollJob("fingerprint-addition-jobs", jobId)).data.status).toBe("SUCCESS");
      expect(await server.stop("SIGTERM")).toBe(0);
      expect(fs.existsSync(path.join(server.dataDir, "db.owner.json"))).toBe(false);
      // With no server running, the ops CLI opens the database itself.
      const direct = await ops(server.env, "usage", accountA);
      expect(Array.isArray(direct.usage)).toBe(true);
      server = await startServer({ dataDir: server.dataDir });
      expect((await call("GET", `/v2/pets/${pet}`)).status).toBe(200);
      // A second server on the same data folder would corrupt it: it stops at start-up instead.
      await expect(startServer({ dataDir: server.dataDir })).rejects.toThrow(/owned by server process/);
    }, RESTARTING_TEST_TIMEOUT_MS);
  }
}

beforeAll(async () => {
  await buildOnce();
}, 300_000);

describe("contract over HTTP, embedded PGlite", () => contractSuite("pglite"));

describe("contract over HTTP, PostgreSQL", () => contractSuite("postgres"));
