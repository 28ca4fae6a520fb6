"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import { Card, Notice } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
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
            <p className={`text-2xl font-semibold ${progress.isVerified ? "text-emerald-800" : "text-red-700"}`} data-testid="verification-verdict">
              {progress.isVerified ? "Verified" : "Not verified"}
            </p>
            <p className="text-sm text-slate-600">
              Score {progress.score.toFixed(1)} (threshold {progress.threshold}: a score of {progress.threshold} means about 1 false match in {progress.thresholdOdds.toLocaleString("en")})
            </p>
            {petId && (
              <Link href={`/dashboard/pets/${petId}`} className="text-sm text-teal-800 underline">
                Open the pet
              </Link>
            )}
          </div>
        </div>
        {!progress.isVerified && (
          <div className="mt-4 grid gap-4 md:grid-cols-2" data-testid="probe-beside-enrolled">
            <ImageStrip title="These nose images (the probe)" kind="fingerprint" ids={progress.probeImageIds} />
            <ImageStrip title="The pet's enrolled nose images" kind="fingerprint" ids={progress.enrolledImageIds} />
            <p className="text-sm text-slate-600 md:col-span-2">
              Compare them: a different animal, or a nose too blurred, turned or glared to match. Capture again with the nose pad filling the frame.
            </p>
          </div>
        )}
      </Card>
    );
  }
  const matches = progress.candidates.filter((c) => c.score >= progress.threshold);
  return (
    <Card title="Candidates">
      <p className="mb-3 text-sm text-slate-600" data-testid="searched-pool">
        {progress.pool
          ? `Searched the ${progress.pool.name} pool: ${progress.pool.pets} registered ${progress.species === "CAT" ? "cat" : "dog"}${progress.pool.pets === 1 ? "" : "s"}.`
          : "Searched the account's search pool."}{" "}
        A pet outside this pool, or not registered, cannot be found.
      </p>
      {matches.length === 0 && (
        <div className="mb-3 space-y-2" data-testid="no-candidates">
          <p className="font-medium">No registered pet in this pool matches these images.</p>
          <Button asChild>
            <Link href={`/dashboard/pets?new=${progress.species}#new-pet`}>Register as a new pet</Link>
          </Button>
        </div>
      )}
      {progress.candidates.length > 0 && (
        <ol className="space-y-2" data-testid="candidates">
          {progress.candidates.map((c, i) => (
            <li key={c.petId} className="flex flex-wrap items-center gap-3 rounded border border-slate-200 p-2" data-testid="candidate">
              <span className="w-6 text-right font-semibold">{i + 1}</span>
              {c.appearanceId ? (
                // eslint-disable-next-line @next/next/no-img-element
                <img src={`/dashboard/images/appearance/${c.appearanceId}`} alt={`Photo of ${c.label}`} className="h-14 w-14 rounded object-cover" />
              ) : (
                <div className="h-14 w-14 rounded bg-slate-200" />
              )}
              <div className="min-w-0 flex-1">
                <Link href={`/dashboard/pets/${c.petId}`} className="font-medium text-teal-800 underline" data-testid="candidate-pet">
                  {c.label}
                </Link>
                <p className="break-all font-mono text-xs text-slate-600" data-testid="candidate-id">{c.petId}</p>
              </div>
              <span className={`font-semibold ${c.score >= progress.threshold ? "text-emerald-800" : "text-slate-600"}`}>
                {c.score.toFixed(1)} {c.score >= progress.threshold ? "match" : "below threshold"}
              </span>
            </li>
          ))}
        </ol>
      )}
    </Card>
  );
}

function ImageStrip({ title, kind, ids }: { title: string; kind: "fingerprint" | "appearance"; ids: string[] }) {
  return (
    <figure>
      <figcaption className="mb-1 text-sm font-medium">{title}</figcaption>
      <ul className="grid grid-cols-3 gap-2 sm:grid-cols-5">
        {ids.map((id) => (
          <li key={id}>
            {/* eslint-disable-next-line @next/next/no-img-element -- served by our own authenticated route */}
            <img src={`/dashboard/images/${kind}/${id}`} alt={title} className="aspect-square w-full rounded object-cover" loading="lazy" />
          </li>
        ))}
      </ul>
    </figure>
  );
}
