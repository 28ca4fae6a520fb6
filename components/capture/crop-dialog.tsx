"use client";

import * as Dialog from "@radix-ui/react-dialog";
import { useRef, useState, type KeyboardEvent, type PointerEvent } from "react";
import { Button } from "@/components/ui/button";

const MIN_SIZE = 0.3;
const STEP = 0.02;
/** Longest side of the cropped JPEG: enough for the engine (it works from 64 px), small to upload. */
const MAX_OUTPUT = 1600;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/**
 * Frames the nose pad in a dropped photo: a square the person drags (or moves with the arrow keys) and
 * sizes, cut out in the browser (canvas) as a new JPEG that is uploaded and checked like any other.
 */
export function CropDialog({ src, name, onCrop }: { src: string; name: string; onCrop: (file: File) => void }) {
  const [open, setOpen] = useState(false);
  const [natural, setNatural] = useState<{ w: number; h: number } | null>(null);
  const [size, setSize] = useState(0.6); // of the short side
  const [center, setCenter] = useState({ x: 0.5, y: 0.5 }); // fractions of width and height
  const [busy, setBusy] = useState(false);
  const imgRef = useRef<HTMLImageElement>(null);
  const drag = useRef<{ x: number; y: number; cx: number; cy: number } | null>(null);

  const side = natural ? size * Math.min(natural.w, natural.h) : 0;
  const half = natural ? { x: side / 2 / natural.w, y: side / 2 / natural.h } : { x: 0, y: 0 };
  const place = (x: number, y: number, s = size) => {
    if (!natural) return;
    const sd = s * Math.min(natural.w, natural.h);
    const hx = sd / 2 / natural.w;
    const hy = sd / 2 / natural.h;
    setCenter({ x: clamp(x, hx, 1 - hx), y: clamp(y, hy, 1 - hy) });
  };

  function onPointerDown(event: PointerEvent<HTMLDivElement>) {
    event.currentTarget.setPointerCapture(event.pointerId);
    drag.current = { x: event.clientX, y: event.clientY, cx: center.x, cy: center.y };
  }
  function onPointerMove(event: PointerEvent<HTMLDivElement>) {
    const box = imgRef.current?.getBoundingClientRect();
    if (!drag.current || !box) return;
    place(drag.current.cx + (event.clientX - drag.current.x) / box.width, drag.current.cy + (event.clientY - drag.current.y) / box.height);
  }
  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const moves: Record<string, [number, number]> = { ArrowLeft: [-STEP, 0], ArrowRight: [STEP, 0], ArrowUp: [0, -STEP], ArrowDown: [0, STEP] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    place(center.x + move[0], center.y + move[1]);
  }

  async function crop() {
    const img = imgRef.current;
    if (!img || !natural) return;
    setBusy(true);
    const out = Math.min(MAX_OUTPUT, Math.round(side));
    const canvas = document.createElement("canvas");
    canvas.width = out;
    canvas.height = out;
    canvas.getContext("2d")!.drawImage(img, center.x * natural.w - side / 2, center.y * natural.h - side / 2, side, side, 0, 0, out, out);
    const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.92));
    setBusy(false);
    if (!blob) return;
    onCrop(new File([blob], `${name.replace(/\.jpe?g$/i, "")}-crop.jpg`, { type: "image/jpeg" }));
    setOpen(false);
  }

  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>
        <button type="button" className="text-xs text-slate-700 underline" aria-label={`Crop ${name}`}>
          Crop
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-slate-900/40" />
        <Dialog.Content className="fixed left-1/2 top-1/2 z-50 max-h-[95vh] w-[calc(100vw-2rem)] max-w-lg -translate-x-1/2 -translate-y-1/2 overflow-auto rounded-lg bg-white p-4 shadow-xl focus:outline-none" data-testid="crop-dialog">
          <Dialog.Title className="text-lg font-semibold">Frame the nose pad</Dialog.Title>
          <Dialog.Description className="mt-1 text-sm text-slate-600">
            Drag the square (or move it with the arrow keys) over the nose pad and size it to fill it. The cut-out is checked as a new image; this one is set aside.
          </Dialog.Description>
          <div className="relative mt-3 select-none">
            {/* eslint-disable-next-line @next/next/no-img-element -- a local object URL */}
            <img ref={imgRef} src={src} alt={`${name}, to crop`} className="block w-full" onLoad={(e) => setNatural({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })} />
            {natural && (
              <div
                role="group"
                tabIndex={0}
                aria-label="Crop frame: drag it, or move it with the arrow keys"
                data-testid="crop-frame"
                className="absolute cursor-move touch-none border-2 border-white shadow-[0_0_0_9999px_rgba(15,23,42,0.55)] outline-none focus-visible:border-teal-300"
                style={{ left: `${(center.x - half.x) * 100}%`, top: `${(center.y - half.y) * 100}%`, width: `${half.x * 200}%`, height: `${half.y * 200}%` }}
                onPointerDown={onPointerDown}
                onPointerMove={onPointerMove}
                onPointerUp={() => (drag.current = null)}
                onKeyDown={onKeyDown}
              />
            )}
          </div>
          <div className="mt-3">
            <label htmlFor="crop-size" className="mb-1 block text-sm font-medium">Frame size</label>
            <input
              id="crop-size"
              type="range"
              min={MIN_SIZE * 100}
              max={100}
              value={Math.round(size * 100)}
              onChange={(e) => {
                const next = Number(e.target.value) / 100;
                setSize(next);
                place(center.x, center.y, next);
              }}
              className="w-full"
            />
            {natural && <p className="text-xs text-slate-600" data-testid="crop-size-px">{Math.round(side)} × {Math.round(side)} px</p>}
          </div>
          <div className="mt-4 flex flex-wrap justify-end gap-2">
            <Dialog.Close asChild>
              <Button variant="secondary">Cancel</Button>
            </Dialog.Close>
            <Button onClick={() => void crop()} disabled={!natural || busy}>
              {busy ? "Cropping…" : "Use this crop"}
            </Button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
