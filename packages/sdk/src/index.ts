// @rhinarium/sdk: a typed client of the Rhinarium /v2 API. The types are generated from the committed OpenAPI
// document (`npm run openapi` writes docs/openapi.json and src/schema.ts); calls go through openapi-fetch. On top of
// it, the contract's client behaviour: retries with exponential backoff and jitter on 5xx and network failures, after
// Retry-After on 429; one Idempotency-Key over all retries of a create or start call, so a retry after a lost answer
// never creates twice; and job polling at the recommended 2–3 s with a bounded wait (`waitForJob`). It imports no
// server code: it can be published as its own package.
import createClient from "openapi-fetch";
import type { components, operations, paths } from "./schema";

export type { components, operations, paths };

/** The `data` of an operation's success envelope. */
type Data<Op, Status extends number> = Op extends { responses: { [S in Status]: { content: { "application/json": { data: infer D } } } } } ? D : never;
type JsonBody<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

export type Pet = Data<operations["getPet"], 200>;
export type CreatePetInput = JsonBody<operations["createPet"]>;
export type UpdatePetInput = JsonBody<operations["updatePet"]>;
export type CreateCaptureSessionInput = JsonBody<operations["createCaptureSession"]>;
export type FingerprintAdditionJob = Data<operations["getFingerprintAdditionJob"], 200>;
export type VerificationJob = Data<operations["getVerificationJob"], 200>;
export type IdentificationJob = Data<operations["getIdentificationJob"], 200>;
export type JobKind = "fingerprint-addition" | "verification" | "identification";
type JobOf<K extends JobKind> = K extends "fingerprint-addition" ? FingerprintAdditionJob : K extends "verification" ? VerificationJob : IdentificationJob;

export interface ApiErrorItem {
  code: string;
  details?: Record<string, string[]>;
}

/** An answer of status 4xx, or 5xx once retries are spent: the contract's error codes (e.g. SERVICEB2B20009). */
export class RhinariumApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: ApiErrorItem[],
  ) {
    super(`HTTP ${status}: ${errors.map((e) => e.code).join(", ") || "no error code"}`);
  }

  get code(): string | undefined {
    return this.errors[0]?.code;
  }
}

export class JobWaitTimeoutError extends Error {}

export interface RhinariumClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries after the first attempt on 5xx or network failure. */
  retries?: number;
  /** First backoff delay; doubles each retry, capped at maxBackoffMs, with ±20 % jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** The contract recommends 2–3 s. */
  pollIntervalMs?: number;
  /** The contract recommends at most 60 s and 20–30 polls. */
  maxWaitMs?: number;
  maxPolls?: number;
  fetch?: (request: Request) => Promise<Response>;
}

type Settings = Required<Omit<RhinariumClientOptions, "fetch">> & { fetch: (request: Request) => Promise<Response> };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const backoffMs = (settings: Settings, attempt: number) =>
  Math.min(settings.maxBackoffMs, settings.initialBackoffMs * 2 ** attempt) * (0.8 + Math.random() * 0.4);

/** One call, its retries included: what openapi-fetch calls instead of fetch. */
function retryingFetch(settings: Settings) {
  return async (request: Request): Promise<Response> => {
    let sent = request;
    if (request.method === "POST" && request.headers.get("content-type")?.startsWith("application/json") && !request.headers.has("idempotency-key")) {
      const headers = new Headers(request.headers);
      headers.set("idempotency-key", crypto.randomUUID());
      sent = new Request(request, { headers });
    }
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined;
      try {
        res = await settings.fetch(sent.clone());
      } catch (error) {
        if (attempt >= settings.retries) throw error;
      }
      if (res && res.status === 429 && attempt < settings.retries) {
        // Rate limited: wait what the server asks (Retry-After, whole seconds), at least the backoff.
        const asked = Number(res.headers.get("retry-after")) * 1000;
        await res.body?.cancel();
        await sleep(Math.max(Number.isFinite(asked) ? asked : 0, backoffMs(settings, attempt)));
        continue;
      }
      if (res && (res.status < 500 || attempt >= settings.retries)) return res;
      await res?.body?.cancel();
      await sleep(backoffMs(settings, attempt));
    }
  };
}

/** The success envelope's data, or the answer's errors thrown. */
async function unwrap<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new RhinariumApiError(response.status, (error as { errors?: ApiErrorItem[] } | undefined)?.errors ?? []);
  return (data as { data?: T } | undefined)?.data as T;
}

export class RhinariumClient {
  private readonly settings: Settings;
  private readonly api: ReturnType<typeof createClient<paths>>;

  constructor(options: RhinariumClientOptions) {
    this.settings = {
      retries: 4,
      initialBackoffMs: 1000,
      maxBackoffMs: 5000,
      pollIntervalMs: 2500,
      maxWaitMs: 60_000,
      maxPolls: 25,
      fetch: (request) => globalThis.fetch(request),
      ...options,
      baseUrl: options.baseUrl.replace(/\/$/, ""),
    };
    this.api = createClient<paths>({ baseUrl: this.settings.baseUrl, fetch: retryingFetch(this.settings), headers: { "x-service-api-key": this.settings.apiKey } });
  }

  createPet(input: CreatePetInput) {
    return unwrap<{ id: string }>(this.api.POST("/v2/pets", { body: input }));
  }
  listPets() {
    return unwrap<Pet[]>(this.api.GET("/v2/pets"));
  }
  getPet(petId: string) {
    return unwrap<Pet>(this.api.GET("/v2/pets/{petId}", { params: { path: { petId } } }));
  }
  updatePet(petId: string, input: UpdatePetInput) {
    return unwrap<{ isSuccessful: boolean }>(this.api.PATCH("/v2/pets/{petId}", { params: { path: { petId } }, body: input }));
  }
  deletePet(petId: string) {
    return unwrap<void>(this.api.DELETE("/v2/pets/{petId}", { params: { path: { petId } } }));
  }
  createCaptureSession(input: CreateCaptureSessionInput) {
    return unwrap<{ id: string }>(this.api.POST("/v2/capture-sessions", { body: input }));
  }
  uploadFingerprint(sessionId: string, jpeg: Uint8Array, filename = "nose.jpg") {
    return unwrap<{ id: string }>(this.api.POST("/v2/fingerprints:upload", { params: { query: { sessionId } }, body: imageForm(jpeg, filename) as never, bodySerializer: (form) => form as unknown as FormData }));
  }
  uploadAppearance(sessionId: string, jpeg: Uint8Array, filename = "appearance.jpg") {
    return unwrap<{ id: string }>(this.api.POST("/v2/appearances:upload", { params: { query: { sessionId } }, body: imageForm(jpeg, filename) as never, bodySerializer: (form) => form as unknown as FormData }));
  }
  addFingerprints(petId: string, sessionId: string) {
    return unwrap<{ jobId: string }>(this.api.POST("/v2/pets/{petId}:addFingerprints", { params: { path: { petId } }, body: { sessionId } }));
  }
  verifyPet(petId: string, sessionId: string) {
    return unwrap<{ jobId: string }>(this.api.POST("/v2/pets/{petId}:verify", { params: { path: { petId } }, body: { sessionId } }));
  }
  identifyPet(sessionId: string) {
    return unwrap<{ jobId: string }>(this.api.POST("/v2/pets:identify", { body: { sessionId } }));
  }
  getFingerprintAdditionJob(jobId: string) {
    return unwrap<FingerprintAdditionJob>(this.api.GET("/v2/fingerprint-addition-jobs/{jobId}", { params: { path: { jobId } } }));
  }
  getVerificationJob(jobId: string) {
    return unwrap<VerificationJob>(this.api.GET("/v2/verification-jobs/{jobId}", { params: { path: { jobId } } }));
  }
  getIdentificationJob(jobId: string) {
    return unwrap<IdentificationJob>(this.api.GET("/v2/identification-jobs/{jobId}", { params: { path: { jobId } } }));
  }

  /** Polls a job until it leaves PENDING, at most maxPolls times and maxWaitMs in all (JobWaitTimeoutError). */
  waitForJob<K extends JobKind>(kind: K, jobId: string): Promise<JobOf<K>> {
    const get = { "fingerprint-addition": () => this.getFingerprintAdditionJob(jobId), verification: () => this.getVerificationJob(jobId), identification: () => this.getIdentificationJob(jobId) }[kind];
    return this.poll(get as () => Promise<JobOf<K>>);
  }
  waitForFingerprintAddition(jobId: string) {
    return this.waitForJob("fingerprint-addition", jobId);
  }
  waitForVerification(jobId: string) {
    return this.waitForJob("verification", jobId);
  }
  waitForIdentification(jobId: string) {
    return this.waitForJob("identification", jobId);
  }

  private async poll<J extends { status: string }>(get: () => Promise<J>): Promise<J> {
    const deadline = Date.now() + this.settings.maxWaitMs;
    for (let polls = 1; ; polls++) {
      const job = await get();
      if (job.status !== "PENDING") return job;
      if (polls >= this.settings.maxPolls || Date.now() + this.settings.pollIntervalMs > deadline) {
        throw new JobWaitTimeoutError(`job still PENDING after ${polls} polls`);
      }
      await sleep(this.settings.pollIntervalMs);
    }
  }
}

function imageForm(jpeg: Uint8Array, filename: string): FormData {
  const form = new FormData();
  form.append("file", new Blob([jpeg as BlobPart], { type: "image/jpeg" }), filename);
  return form;
}
