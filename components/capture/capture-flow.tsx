"use client";

import Link from "next/link";
import { useCallback, useEffect, useRef, useState } from "react";
import { createCaptureSession, getJobProgress, startCaptureJob, uploadCaptureImage } from "@/app/dashboard/capture/actions";
import { buttonClass, Card, inputClass, Notice, secondaryButtonClass } from "@/components/dashboard/ui";
import type { JobProgress, UploadedImage } from "@/lib/dashboard/capture";
import type { Species } from "@/lib/generated/prisma/enums";
import { petLabel } from "@/lib/dashboard/pet-fields";
import { CameraCapture } from "./camera-capture";
import { ImageDropzone, type DroppedImage } from "./image-dropzone";
import { JobResult } from "./job-result";

type Purpose = "PET_PROFILE_REGISTRATION" | "PET_VERIFICATION" | "PET_IDENTIFICATION";
type Pet = { id: string; species: Species; breed: string | null; metadata: string | null; hasFingerprint: boolean };

const POLL_MS = 1000;

/**
 * One capture at the counter: nose images and an appearance photo go up one by one as they are
 * dropped (each shows its quality verdict when the engine has looked at it), the start button
 * enables at the minimum counts, then the job is followed until its result.
 */
export function CaptureFlow({ purpose, pet }: { purpose: Purpose; pet: Pet | null }) {
  const [species, setSpecies] = useState<Species>(pet?.species ?? "DOG");
  const [session, setSession] = useState<{ sessionId: string; minimumNoseImages: number } | null>(null);
  const sessionPromise = useRef<Promise<{ sessionId: string; minimumNoseImages: number } | null> | null>(null);
  const [noses, setNoses] = useState<DroppedImage[]>([]);
  const [appearances, setAppearances] = useState<DroppedImage[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [job, setJob] = useState<{ jobId: string; progress: JobProgress; startedAt: number } | null>(null);
  const [starting, setStarting] = useState(false);
  const uploads = useRef<Promise<void>>(Promise.resolve());

  const ensureSession = useCallback(() => {
    sessionPromise.current ??= createCaptureSession(
      purpose === "PET_IDENTIFICATION" ? { purpose, species } : { purpose, petId: pet!.id },
    ).then((result) => {
      if (!result.ok) {
        setError(result.error.message);
        sessionPromise.current = null;
        return null;
      }
      setSession(result.data);
      return result.data;
    });
    return sessionPromise.current;
  }, [purpose, species, pet]);

  // A pet's flow knows its species: open the session at once, so the minimum shows before any drop.
  useEffect(() => {
    if (pet) void ensureSession();
  }, [pet, ensureSession]);

  const listSetter = (kind: "fingerprint" | "appearance") => (kind === "fingerprint" ? setNoses : setAppearances);

  /** Files the dropzone refused (not JPEG): listed with the reason, never uploaded, removable. */
  function addRejected(kind: "fingerprint" | "appearance", files: { file: File; reason: string }[]) {
    listSetter(kind)((list) => [
      ...list,
      ...files.map(({ file, reason }) => ({ key: `${file.name}-${crypto.randomUUID()}`, name: file.name, previewUrl: URL.createObjectURL(file), status: "error" as const, error: reason })),
    ]);
  }

  /** Takes a refused or unusable image off the list (the job ignores unusable images anyway). */
  function remove(kind: "fingerprint" | "appearance", key: string) {
    listSetter(kind)((list) => list.filter((x) => x.key !== key));
  }

  function addFiles(kind: "fingerprint" | "appearance", files: File[]) {
    const setList = listSetter(kind);
    const added = files.map((file) => ({ key: `${file.name}-${crypto.randomUUID()}`, name: file.name, previewUrl: URL.createObjectURL(file), status: "uploading" as const }));
    setList((list) => [...list, ...added]);
    // One upload at a time, in drop order: the engine analyses each on arrival.
    added.forEach((item, i) => {
      uploads.current = uploads.current.then(async () => {
        const opened = await ensureSession();
        const update = (patch: Partial<DroppedImage>) => setList((list) => list.map((x) => (x.key === item.key ? { ...x, ...patch } : x)));
        if (!opened) return update({ status: "error", error: "No capture session." });
        const form = new FormData();
        form.set("sessionId", opened.sessionId);
        form.set("kind", kind);
        form.set("file", files[i]);
        const result = await uploadCaptureImage(form).catch(() => null);
        if (!result) return update({ status: "error", error: "Upload failed: check the connection and try again." });
        if (!result.ok) return update({ status: "error", error: result.error.fields?.file?.join("; ") ?? result.error.message });
        update({ status: "done", uploaded: result.data as UploadedImage });
      });
    });
  }

  const minimum = session?.minimumNoseImages ?? (purpose === "PET_PROFILE_REGISTRATION" ? 5 : 3);
  const nosesDone = noses.filter((n) => n.status === "done").length;
  const usable = noses.filter((n) => n.uploaded?.kind === "fingerprint" && n.uploaded.usable).length;
  const appearancesDone = appearances.filter((a) => a.status === "done").length;
  const uploading = [...noses, ...appearances].some((x) => x.status === "uploading");
  // Only usable nose images count: the job needs `minimum` of them, whatever else was dropped.
  const ready = session !== null && usable >= minimum && appearancesDone >= 1 && !uploading && job === null;

  async function start() {
    if (!session) return;
    setStarting(true);
    setError(null);
    const result = await startCaptureJob({ purpose, sessionId: session.sessionId, petId: pet?.id });
    setStarting(false);
    if (!result.ok) return setError(result.error.message);
    setJob({ jobId: result.data.jobId, progress: { status: "PENDING" }, startedAt: Date.now() });
  }

  useEffect(() => {
    if (!job || job.progress.status !== "PENDING") return;
    const timer = setTimeout(async () => {
      const result = await getJobProgress({ jobId: job.jobId }).catch(() => null);
      if (result && !result.ok) return setError(result.error.message);
      setJob((current) => (current && result?.ok ? { ...current, progress: result.data } : current ? { ...current } : current));
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [job]);

  if (purpose === "PET_VERIFICATION" && pet && !pet.hasFingerprint) {
    return (
      <Notice tone="warning">
        This pet has no enrolled nose images yet. <Link href={`/dashboard/capture/register?petId=${pet.id}`} className="underline">Register them first.</Link>
      </Notice>
    );
  }

  return (
    <div className="space-y-4">
      {pet ? (
        <p className="text-sm text-slate-600">
          Pet <Link href={`/dashboard/pets/${pet.id}`} className="font-medium text-teal-800 underline">{petLabel(pet)}</Link>
          {pet.breed ? ` · ${pet.breed}` : ""}
        </p>
      ) : (
        <div className="max-w-xs">
          <label htmlFor="identify-species" className="mb-1 block text-sm font-medium">
            Species
          </label>
          <select id="identify-species" className={inputClass} value={species} disabled={session !== null} onChange={(e) => setSpecies(e.target.value as Species)}>
            <option value="DOG">Dog</option>
            <option value="CAT">Cat</option>
          </select>
        </div>
      )}
      <div className="grid gap-4 md:grid-cols-2">
        <Card title={`Nose images (${usable} usable of at least ${minimum})`}>
          <p className="mb-2 text-sm text-slate-600">Fill the frame with the nose pad, with the pet's head upright in the photo (tilted by at most about 30°).</p>
          <ImageDropzone
            testId="nose-dropzone"
            label="Drop nose photos here, or tap to choose"
            images={noses}
            onFiles={(f) => addFiles("fingerprint", f)}
            onRejected={(f) => addRejected("fingerprint", f)}
            onRemove={(key) => remove("fingerprint", key)}
            onCropped={(key, file) => {
              // The unusable original is set aside (the job ignores it); the cut-out is checked as a new image.
              remove("fingerprint", key);
              addFiles("fingerprint", [file]);
            }}
            disabled={job !== null}
          />
          <div className="mt-3">
            <CameraCapture onCapture={(file) => addFiles("fingerprint", [file])} disabled={job !== null} />
          </div>
          {nosesDone > 0 && (
            <p className="mt-2 text-sm text-slate-600" data-testid="usable-count">
              {usable} of {nosesDone} usable
            </p>
          )}
        </Card>
        <Card title={`Appearance photo (${appearancesDone} of at least 1)`}>
          <ImageDropzone
            testId="appearance-dropzone"
            label="Drop a photo of the pet, or tap to choose"
            images={appearances}
            onFiles={(f) => addFiles("appearance", f)}
            onRejected={(f) => addRejected("appearance", f)}
            onRemove={(key) => remove("appearance", key)}
            disabled={job !== null}
          />
        </Card>
      </div>
      {error && (
        <Notice tone="error" testId="capture-error">
          {error}
        </Notice>
      )}
      {!job && (
        <div className="flex flex-wrap items-center gap-3">
          <button type="button" className={buttonClass} disabled={!ready || starting} onClick={start} data-testid="start-job">
            {starting ? "Starting…" : purpose === "PET_PROFILE_REGISTRATION" ? "Start registration" : purpose === "PET_VERIFICATION" ? "Start verification" : "Start identification"}
          </button>
          {!ready && (
            <span className="text-sm text-slate-600" data-testid="start-needs">
              Needs at least {minimum} usable nose images ({usable} so far) and 1 appearance photo, all uploaded.
            </span>
          )}
        </div>
      )}
      {job && <JobResult progress={job.progress} startedAt={job.startedAt} petId={pet?.id ?? null} />}
      {job && job.progress.status !== "PENDING" && (
        <button type="button" className={secondaryButtonClass} onClick={() => window.location.reload()}>
          New capture
        </button>
      )}
    </div>
  );
}
