"use client";

import { useSyncExternalStore } from "react";
import { useDropzone, type FileRejection } from "react-dropzone";
import { QualityBadge } from "@/components/dashboard/ui";
import type { UploadedImage } from "@/lib/dashboard/capture";
import { CropDialog } from "./crop-dialog";

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
export function ImageDropzone(props: {
  label: string;
  images: DroppedImage[];
  onFiles: (files: File[]) => void;
  onRejected: (files: { file: File; reason: string }[]) => void;
  onRemove: (key: string) => void;
  /** Unusable nose images may be cropped to the nose pad: the cut-out replaces the image in the list. */
  onCropped?: (key: string, file: File) => void;
  disabled: boolean;
  testId: string;
}) {
  const hydrated = useHydrated();
  const { getRootProps, getInputProps, isDragActive } = useDropzone({
    accept: { "image/jpeg": [".jpg", ".jpeg"] },
    disabled: props.disabled,
    onDrop: (accepted, rejected: FileRejection[]) => {
      if (accepted.length > 0) props.onFiles(accepted);
      if (rejected.length > 0) props.onRejected(rejected.map(({ file }) => ({ file, reason: `JPEG only: ${file.type ? file.type.replace("image/", "").toUpperCase() : "this file"} is not accepted. Export or save it as JPEG.` })));
    },
  });
  return (
    <div className="space-y-3">
      {/* The file input sits beside the zone, not in it: a control inside a role="button" is nested interaction. */}
      <input {...getInputProps()} data-testid={`${props.testId}-input`} />
      <div
        {...getRootProps({ role: "button" })}
        data-testid={props.testId}
        data-ready={hydrated && !props.disabled}
        className={`flex min-h-24 cursor-pointer items-center justify-center rounded-lg border-2 border-dashed p-4 text-center text-sm focus-visible:outline focus-visible:outline-2 focus-visible:outline-teal-700 ${
          isDragActive ? "border-teal-600 bg-teal-50" : "border-slate-300 bg-slate-50"
        } ${props.disabled ? "cursor-not-allowed opacity-50" : ""}`}
      >
        <span>
          {isDragActive ? "Drop the images here" : props.label}
          <span className="mt-1 block text-xs text-slate-600">JPEG only</span>
        </span>
      </div>
      {props.images.length > 0 && (
        <ul className="grid grid-cols-3 gap-2 sm:grid-cols-4" aria-label="Uploaded images">
          {props.images.map((image) => (
            <li key={image.key} className="space-y-1 text-xs" data-testid="capture-image" data-status={image.status}>
              {/* eslint-disable-next-line @next/next/no-img-element -- a local object URL preview */}
              <img src={image.previewUrl} alt={image.name} className="aspect-square w-full rounded object-cover" />
              {image.status === "uploading" && <span className="text-slate-600">checking…</span>}
              {image.status === "error" && <span className="text-red-700" data-testid="capture-image-error">{image.error}</span>}
              {image.status === "done" && image.uploaded?.kind === "fingerprint" && (
                <div>
                  <QualityBadge usable={image.uploaded.usable} score={image.uploaded.score} reasons={image.uploaded.reasons} />
                  {image.uploaded.reasons.length > 0 && <p className={image.uploaded.usable ? "text-amber-800" : "text-red-700"}>{image.uploaded.reasons.join(", ")}</p>}
                </div>
              )}
              {image.status === "done" && image.uploaded?.kind === "appearance" && <span className="text-emerald-800">uploaded</span>}
              <div className="flex flex-wrap gap-x-3">
                {(image.status === "error" || (image.uploaded?.kind === "fingerprint" && !image.uploaded.usable)) && (
                  <button type="button" className="text-xs text-slate-700 underline" onClick={() => props.onRemove(image.key)} aria-label={`Remove ${image.name}`}>
                    Remove
                  </button>
                )}
                {props.onCropped && !props.disabled && image.uploaded?.kind === "fingerprint" && !image.uploaded.usable && (
                  <CropDialog src={image.previewUrl} name={image.name} onCrop={(file) => props.onCropped!(image.key, file)} />
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
