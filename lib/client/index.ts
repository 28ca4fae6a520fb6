// Typed client of the /v2 API, with the contract's client behaviour: retry with exponential backoff
// on 5xx (and network failures), after Retry-After on 429, and job polling at 2–3 s with a bounded wait.
// Types come from the same zod schemas that validate requests on the server.
import type { z } from "zod";
import type { createCaptureSessionBodySchema } from "@/lib/capture-sessions/schemas";
import type { fingerprintAdditionJobSchema, identificationJobSchema, verificationJobSchema } from "@/lib/jobs/job-views";
import type { createPetBodySchema, petSchema, updatePetBodySchema } from "@/lib/pets/schemas";

export type Pet = z.infer<typeof petSchema>;
export type CreatePetInput = z.infer<typeof createPetBodySchema>;
export type UpdatePetInput = z.infer<typeof updatePetBodySchema>;
export type CreateCaptureSessionInput = z.infer<typeof createCaptureSessionBodySchema>;
export type FingerprintAdditionJob = z.infer<typeof fingerprintAdditionJobSchema>;
export type VerificationJob = z.infer<typeof verificationJobSchema>;
export type IdentificationJob = z.infer<typeof identificationJobSchema>;

export interface ApiErrorItem {
  code: string;
  details?: Record<string, string[]>;
}

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
  fetch?: typeof fetch;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class RhinariumClient {
  private readonly opts: Required<Omit<RhinariumClientOptions, "fetch">> & { fetch: typeof fetch };

  constructor(options: RhinariumClientOptions) {
    this.opts = {
      retries: 4,
      initialBackoffMs: 1000,
      maxBackoffMs: 5000,
      pollIntervalMs: 2500,
      maxWaitMs: 60_000,
      maxPolls: 25,
      fetch: globalThis.fetch.bind(globalThis),
      ...options,
      baseUrl: options.baseUrl.replace(/\/$/, ""),
    };
  }

  /** One call with retries; answers `data` of the success envelope (undefined for 204). */
  async request<T>(method: string, path: string, body?: { json?: unknown; form?: FormData }): Promise<T> {
    // A create or start call carries one Idempotency-Key over all its retries: a retry after a lost
    // answer gets the first answer instead of creating twice (the server's addition to the contract).
    const idempotency: Record<string, string> = method === "POST" && body?.json !== undefined ? { "idempotency-key": crypto.randomUUID() } : {};
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined;
      try {
        res = await this.opts.fetch(this.opts.baseUrl + path, {
          method,
          headers: {
            "x-service-api-key": this.opts.apiKey,
            ...(body?.json !== undefined ? { "content-type": "application/json" } : {}),
            ...idempotency,
          },
          body: body?.json !== undefined ? JSON.stringify(body.json) : body?.form,
        });
      } catch (error) {
        if (attempt >= this.opts.retries) throw error;
      }
      if (res && res.status === 429 && attempt < this.opts.retries) {
        // Rate limited: wait what the server asks (Retry-After, whole seconds), at least the backoff.
        const asked = Number(res.headers.get("retry-after")) * 1000;
        await res.body?.cancel();
        await sleep(Math.max(Number.isFinite(asked) ? asked : 0, this.backoffMs(attempt)));
        continue;
      }
      if (res && res.status < 500) {
        if (res.status === 204) return undefined as T;
        const payload = (await res.json()) as { success?: boolean; data?: T; errors?: ApiErrorItem[] };
        if (res.ok) return payload.data as T;
        throw new RhinariumApiError(res.status, payload.errors ?? []);
      }
      if (res && attempt >= this.opts.retries) {
        const payload = (await res.json().catch(() => ({}))) as { errors?: ApiErrorItem[] };
        throw new RhinariumApiError(res.status, payload.errors ?? []);
      }
      await sleep(this.backoffMs(attempt));
    }
  }

  private backoffMs(attempt: number): number {
    return Math.min(this.opts.maxBackoffMs, this.opts.initialBackoffMs * 2 ** attempt) * (0.8 + Math.random() * 0.4);
  }

  createPet(input: CreatePetInput) {
    return this.request<{ id: string }>("POST", "/v2/pets", { json: input });
  }
  listPets() {
    return this.request<Pet[]>("GET", "/v2/pets");
  }
  getPet(petId: string) {
    return this.request<Pet>("GET", `/v2/pets/${encodeURIComponent(petId)}`);
  }
  updatePet(petId: string, input: UpdatePetInput) {
    return this.request<{ isSuccessful: boolean }>("PATCH", `/v2/pets/${encodeURIComponent(petId)}`, { json: input });
  }
  deletePet(petId: string) {
    return this.request<void>("DELETE", `/v2/pets/${encodeURIComponent(petId)}`);
  }
  createCaptureSession(input: CreateCaptureSessionInput) {
    return this.request<{ id: string }>("POST", "/v2/capture-sessions", { json: input });
  }
  uploadFingerprint(sessionId: string, jpeg: Uint8Array, filename = "nose.jpg") {
    return this.upload("/v2/fingerprints:upload", sessionId, jpeg, filename);
  }
  uploadAppearance(sessionId: string, jpeg: Uint8Array, filename = "appearance.jpg") {
    return this.upload("/v2/appearances:upload", sessionId, jpeg, filename);
  }
  addFingerprints(petId: string, sessionId: string) {
    return this.request<{ jobId: string }>("POST", `/v2/pets/${encodeURIComponent(petId)}:addFingerprints`, { json: { sessionId } });
  }
  verifyPet(petId: string, sessionId: string) {
    return this.request<{ jobId: string }>("POST", `/v2/pets/${encodeURIComponent(petId)}:verify`, { json: { sessionId } });
  }
  identifyPet(sessionId: string) {
    return this.request<{ jobId: string }>("POST", "/v2/pets:identify", { json: { sessionId } });
  }
  getFingerprintAdditionJob(jobId: string) {
    return this.request<FingerprintAdditionJob>("GET", `/v2/fingerprint-addition-jobs/${encodeURIComponent(jobId)}`);
  }
  getVerificationJob(jobId: string) {
    return this.request<VerificationJob>("GET", `/v2/verification-jobs/${encodeURIComponent(jobId)}`);
  }
  getIdentificationJob(jobId: string) {
    return this.request<IdentificationJob>("GET", `/v2/identification-jobs/${encodeURIComponent(jobId)}`);
  }

  waitForFingerprintAddition(jobId: string) {
    return this.poll(() => this.getFingerprintAdditionJob(jobId));
  }
  waitForVerification(jobId: string) {
    return this.poll(() => this.getVerificationJob(jobId));
  }
  waitForIdentification(jobId: string) {
    return this.poll(() => this.getIdentificationJob(jobId));
  }

  /** Polls until the job leaves PENDING, at most maxPolls times and maxWaitMs in all. */
  private async poll<J extends { status: string }>(get: () => Promise<J>): Promise<J> {
    const deadline = Date.now() + this.opts.maxWaitMs;
    for (let polls = 1; ; polls++) {
      const job = await get();
      if (job.status !== "PENDING") return job;
      if (polls >= this.opts.maxPolls || Date.now() + this.opts.pollIntervalMs > deadline) {
        throw new JobWaitTimeoutError(`job still PENDING after ${polls} polls`);
      }
      await sleep(this.opts.pollIntervalMs);
    }
  }

  private upload(path: string, sessionId: string, jpeg: Uint8Array, filename: string) {
    const form = new FormData();
    form.append("file", new Blob([jpeg as BlobPart], { type: "image/jpeg" }), filename);
    return this.request<{ id: string }>("POST", `${path}?sessionId=${encodeURIComponent(sessionId)}`, { form });
  }
}
