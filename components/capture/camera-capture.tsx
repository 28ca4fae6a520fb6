"use client";

import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { analyseFrame, toGrey, type FrameGuidance } from "@/lib/dashboard/capture-guidance";

const SAMPLE = 128;
const GUIDE_MS = 300;

/**
 * The camera at the counter: the rear camera (a phone) with a circle to frame the nose pad, live
 * guidance on the framed centre (sharpness, glare, light, camera size) and a shutter that hands the
 * framed square to the capture as a JPEG, like a dropped photo.
 */
export function CameraCapture({ onCapture, disabled }: { onCapture: (file: File) => void; disabled: boolean }) {
  const [open, setOpen] = useState(false);
  return open ? (
    <CameraView onCapture={onCapture} onClose={() => setOpen(false)} disabled={disabled} />
  ) : (
    <Button variant="secondary" onClick={() => setOpen(true)} disabled={disabled} data-testid="open-camera">
      Use the camera
    </Button>
  );
}

/** The centred square of the video that the circle frames. */
function framedSquare(video: HTMLVideoElement) {
  const side = Math.min(video.videoWidth, video.videoHeight);
  return { sx: (video.videoWidth - side) / 2, sy: (video.videoHeight - side) / 2, side };
}

function CameraView({ onCapture, onClose, disabled }: { onCapture: (file: File) => void; onClose: () => void; disabled: boolean }) {
  const video = useRef<HTMLVideoElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [guidance, setGuidance] = useState<FrameGuidance | null>(null);
  const [shots, setShots] = useState(0);

  useEffect(() => {
    let stream: MediaStream | null = null;
    let stopped = false;
    if (!navigator.mediaDevices?.getUserMedia) {
      setError("This browser gives no camera here (it needs HTTPS): drop photos instead.");
      return;
    }
    navigator.mediaDevices
      .getUserMedia({ video: { facingMode: { ideal: "environment" }, width: { ideal: 1920 }, height: { ideal: 1080 } }, audio: false })
      .then(async (s) => {
        if (stopped) return s.getTracks().forEach((t) => t.stop());
        stream = s;
        if (video.current) {
          video.current.srcObject = s;
          await video.current.play().catch(() => undefined);
        }
      })
      .catch((e: Error) => setError(e.name === "NotAllowedError" ? "Camera access was refused: allow it in the browser, or drop photos instead." : `No camera: ${e.message}`));
    return () => {
      stopped = true;
      stream?.getTracks().forEach((t) => t.stop());
    };
  }, []);

  useEffect(() => {
    const canvas = document.createElement("canvas");
    canvas.width = SAMPLE;
    canvas.height = SAMPLE;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    const timer = setInterval(() => {
      const v = video.current;
      if (!v || !context || v.readyState < 2 || v.videoWidth === 0) return;
      const { sx, sy, side } = framedSquare(v);
      context.drawImage(v, sx, sy, side, side, 0, 0, SAMPLE, SAMPLE);
      const grey = toGrey(context.getImageData(0, 0, SAMPLE, SAMPLE).data);
      setGuidance(analyseFrame(grey, SAMPLE, SAMPLE, side));
    }, GUIDE_MS);
    return () => clearInterval(timer);
  }, []);

  function shoot() {
    const v = video.current;
    if (!v || v.videoWidth === 0) return;
    const { sx, sy, side } = framedSquare(v);
    const canvas = document.createElement("canvas");
    canvas.width = side;
    canvas.height = side;
    canvas.getContext("2d")!.drawImage(v, sx, sy, side, side, 0, 0, side, side);
    canvas.toBlob(
      (blob) => {
        if (!blob) return setError("The photo could not be taken: try again.");
        setShots((n) => n + 1);
        onCapture(new File([blob], `camera-${Date.now()}.jpg`, { type: "image/jpeg" }));
      },
      "image/jpeg",
      0.92,
    );
  }

  return (
    <div className="space-y-2" data-testid="camera">
      {error ? (
        <p className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900" role="status" data-testid="camera-error">
          {error}
        </p>
      ) : (
        <div className="relative mx-auto aspect-square w-full max-w-sm overflow-hidden rounded-lg bg-slate-900">
          <video ref={video} className="h-full w-full object-cover" playsInline muted aria-label="Camera preview" data-testid="camera-video" />
          {/* The framing overlay: the nose pad fills the circle. */}
          <div aria-hidden className={`pointer-events-none absolute inset-[12%] rounded-full border-4 ${guidance && !guidance.advice ? "border-emerald-400" : "border-amber-300"}`} />
        </div>
      )}
      {!error && (
        <p className="text-sm" role="status" aria-live="polite" data-testid="camera-guidance" data-ready={guidance !== null && guidance.advice === null}>
          {guidance === null ? "Starting the camera…" : (guidance.advice ?? "Looks good: take the photo.")}
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        {!error && (
          <Button onClick={shoot} disabled={disabled || guidance === null} data-testid="take-photo">
            Take photo{shots > 0 ? ` (${shots} taken)` : ""}
          </Button>
        )}
        <Button variant="secondary" onClick={onClose}>
          Close the camera
        </Button>
      </div>
    </div>
  );
}
