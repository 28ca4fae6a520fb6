"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import { Card, Notice } from "@/components/dashboard/ui";
import type { JobProgress } from "@/lib/dashboard/capture";
import { ScoreGauge } from "./score-gauge";

export function JobResult({ progress, startedAt, petId }: { progress: JobProgress; startedAt: number; petId: string | null }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (progress.status !== "PENDING") return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [progress.status]);

  if (progress.status === "PENDING") {
    return (
      <Card>
        <div data-testid="job-progress" aria-live="polite" className="space-y-2">
          <p className="font-medium">Matching… {Math.max(0, Math.round((now - startedAt) / 1000))} s</p>
          <div className="h-2 overflow-hidden rounded bg-slate-200" role="progressbar" aria-label="Job running">
            <div className="h-full w-1/3 animate-pulse rounded bg-teal-600" />
          </div>
        </div>
      </Card>
    );
  }
  if (progress.status === "FAILED") {
    return (
      <Notice tone="error" testId="job-failed">
        The job failed. {progress.summary ?? "Capture again and retry."}
      </Notice>
    );
  }
  if (progress.kind === "FINGERPRINT_ADDITION") {
    return (
      <Notice tone="success" testId="job-registered">
        Nose images registered.{" "}
        <Link href={`/dashboard/pets/${progress.petId}`} className="underline">
          Open the pet
        </Link>{" "}
        or{" "}
        <Link href={`/dashboard/capture/verify?petId=${progress.petId}`} className="underline">
          verify it
        </Link>
        .
      </Notice>
    );
  }
  if (progress.kind === "VERIFICATION") {
    return (
      <Card>
        <div data-testid="verification-result" className="flex flex-wrap items-center gap-6">
          <ScoreGauge score={progress.score} threshold={progress.threshold} />
          <div>
            <p className={`text-2xl font-semibold ${progress.isVerified ? "text-emerald-700" : "text-red-700"}`} data-testid="verification-verdict">
              {progress.isVerified ? "Verified" : "Not verified"}
            </p>
            <p className="text-sm text-slate-600">
              Score {progress.score.toFixed(1)} (threshold {progress.threshold}: a score of 40 means about 1 false match in 10,000)
            </p>
            {petId && (
              <Link href={`/dashboard/pets/${petId}`} className="text-sm text-teal-800 underline">
                Open the pet
              </Link>
            )}
          </div>
        </div>
      </Card>
    );
  }
  return (
    <Card title="Candidates">
      {progress.candidates.length === 0 ? (
        <p data-testid="no-candidates">No registered pet matches these images.</p>
      ) : (
        <ol className="space-y-2" data-testid="candidates">
          {progress.candidates.map((c, i) => (
            <li key={c.petId} className="flex items-center gap-3 rounded border border-slate-200 p-2" data-testid="candidate">
              <span className="w-6 text-right font-semibold">{i + 1}</span>
              {c.appearanceId ? (
                // eslint-disable-next-line @next/next/no-img-element
                <img src={`/dashboard/images/appearance/${c.appearanceId}`} alt="" className="h-14 w-14 rounded object-cover" />
              ) : (
                <div className="h-14 w-14 rounded bg-slate-200" />
              )}
              <div className="flex-1">
                <Link href={`/dashboard/pets/${c.petId}`} className="font-mono text-sm text-teal-800 underline" data-testid="candidate-pet">
                  {c.petId}
                </Link>
                <p className="text-xs text-slate-600">
                  {c.breed ?? "breed unknown"} · <span className="font-mono">{c.metadata ?? ""}</span>
                </p>
              </div>
              <span className={`font-semibold ${c.score >= progress.threshold ? "text-emerald-700" : "text-slate-500"}`}>{c.score.toFixed(1)}</span>
            </li>
          ))}
        </ol>
      )}
    </Card>
  );
}
