"use client";

import { useSyncExternalStore } from "react";
import { useDropzone } from "react-dropzone";
import { QualityBadge } from "@/components/dashboard/ui";
import type { UploadedImage } from "@/lib/dashboard/capture";

export interface DroppedImage {
  key: string;
  name: string;
  previewUrl: string;
  status: "uploading" | "done" | "error";
  uploaded?: UploadedImage;
  error?: string;
}

const subscribeToNothing = () => () => {};

/** False in the server's HTML and while React hydrates it, true once this client renders. */
function useHydrated(): boolean {
  return useSyncExternalStore(subscribeToNothing, () => true, () => false);
}

/**
 * Drag and drop or pick JPEGs; each shows its preview and, once uploaded, its verdict. `data-ready` says
 * when a drop is taken: hydrated and not disabled (before hydration the server's HTML has no handlers).
 */
export function ImageDropzone(props: { label: string; images: DroppedImage[]; onFiles: (files: File[]) => void; disabled: boolean; testId: string }) {
  const hydrated = useHydrated();
  const { getRootProps, getInputProps, isDragActive } = useDropzone({
    accept: { "image/jpeg": [".jpg", ".jpeg"] },
    disabled: props.disabled,
    onDrop: (accepted) => accepted.length > 0 && props.onFiles(accepted),
  });
  return (
    <div className="space-y-3">
      <div
        {...getRootProps()}
        data-testid={props.testId}
        data-ready={hydrated && !props.disabled}
        className={`flex min-h-24 cursor-pointer items-center justify-center rounded-lg border-2 border-dashed p-4 text-center text-sm focus-visible:outline focus-visible:outline-2 focus-visible:outline-teal-700 ${
          isDragActive ? "border-teal-600 bg-teal-50" : "border-slate-300 bg-slate-50"
        } ${props.disabled ? "cursor-not-allowed opacity-50" : ""}`}
      >
        <input {...getInputProps()} data-testid={`${props.testId}-input`} />
        {isDragActive ? "Drop the images here" : props.label}
      </div>
      {props.images.length > 0 && (
        <ul className="grid grid-cols-3 gap-2 sm:grid-cols-4" aria-label="Uploaded images">
          {props.images.map((image) => (
            <li key={image.key} className="space-y-1 text-xs" data-testid="capture-image" data-status={image.status}>
              {/* eslint-disable-next-line @next/next/no-img-element -- a local object URL preview */}
              <img src={image.previewUrl} alt={image.name} className="aspect-square w-full rounded object-cover" />
              {image.status === "uploading" && <span className="text-slate-500">checking…</span>}
              {image.status === "error" && <span className="text-red-700">{image.error}</span>}
              {image.status === "done" && image.uploaded?.kind === "fingerprint" && (
                <div title={image.uploaded.reasons.join(", ")}>
                  <QualityBadge usable={image.uploaded.usable} score={image.uploaded.score} />
                  {!image.uploaded.usable && image.uploaded.reasons.length > 0 && <p className="text-red-700">{image.uploaded.reasons[0]}</p>}
                </div>
              )}
              {image.status === "done" && image.uploaded?.kind === "appearance" && <span className="text-emerald-700">uploaded</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
