// What a job came to, in words a clinic reads: a verification that ran to its end but did not verify
// is "Not verified", never a green SUCCESS. The status says whether the job ran; the outcome says
// what it found. Pure: the jobs explorer, the job page and the pet page share it.

export type OutcomeTone = "positive" | "negative" | "neutral" | "running";

export interface JobOutcome {
  label: string;
  tone: OutcomeTone;
}

interface JobLike {
  kind: string;
  status: string;
  result: unknown;
  failureReason?: unknown;
}

/** The decision threshold as pages word it: the score, and "about 1 false match in N" from the engine's calibration. */
export function decisionThreshold(engine: { DECISION_THRESHOLD: number; scoreToFmr(score: number): number }): { threshold: number; thresholdOdds: number } {
  return { threshold: engine.DECISION_THRESHOLD, thresholdOdds: Math.round(1 / engine.scoreToFmr(engine.DECISION_THRESHOLD)) };
}

export function jobOutcome(job: JobLike, threshold: number): JobOutcome {
  if (job.status === "PENDING") return { label: "Running", tone: "running" };
  if (job.status === "FAILED") {
    const reason = job.failureReason as { summary?: unknown; code?: unknown } | null | undefined;
    const why = typeof reason?.code === "string" ? reason.code.toLowerCase().replaceAll("_", " ") : null;
    return { label: why ? `Failed: ${why}` : "Failed", tone: "negative" };
  }
  if (job.kind === "FINGERPRINT_ADDITION") return { label: "Registered", tone: "positive" };
  if (job.kind === "VERIFICATION") {
    const result = job.result as { isVerified?: boolean; score?: number } | null;
    const score = typeof result?.score === "number" ? ` · score ${result.score.toFixed(1)}` : "";
    return result?.isVerified ? { label: `Verified${score}`, tone: "positive" } : { label: `Not verified${score}`, tone: "negative" };
  }
  const candidates = (job.result as { candidates?: { score: number }[] } | null)?.candidates ?? [];
  const matches = candidates.filter((c) => c.score >= threshold).length;
  if (matches > 0) return { label: `${matches} match${matches === 1 ? "" : "es"} · best ${candidates[0].score.toFixed(1)}`, tone: "positive" };
  return { label: candidates.length > 0 ? `No match (best ${candidates[0].score.toFixed(1)}, below ${threshold})` : "No match", tone: "neutral" };
}

/** The pool an identification searched, as the job recorded it (null for jobs from before it did). */
export function searchedPool(details: unknown): { name: string; pets: number } | null {
  const pool = (details as { pool?: { name?: unknown; pets?: unknown } } | null)?.pool;
  return typeof pool?.name === "string" && typeof pool.pets === "number" ? { name: pool.name, pets: pool.pets } : null;
}
