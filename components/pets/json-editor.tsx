"use client";

import { useEffect, useRef, type ReactNode } from "react";

/**
 * A JSON text editor: a textarea over a highlighted copy of its text (same font and box, so the
 * colours line up), and a parse check on every change that names the problem and where it is.
 */
export function JsonEditor(props: { id: string; label: string; value: string; onChange: (text: string) => void; onValidity: (error: string | null) => void }) {
  const { id, label, value, onChange, onValidity } = props;
  const preRef = useRef<HTMLPreElement>(null);
  const error = jsonError(value);

  useEffect(() => onValidity(error), [error, onValidity]);

  return (
    <div>
      <label htmlFor={id} className="mb-1 block text-sm font-medium">
        {label}
      </label>
      <div className={`relative rounded-md border bg-white font-mono text-sm ${error ? "border-red-500" : "border-slate-300"}`}>
        <pre ref={preRef} aria-hidden className="pointer-events-none m-0 h-40 overflow-hidden whitespace-pre-wrap break-words p-3">
          {highlight(value)}
          {"\n"}
        </pre>
        <textarea
          id={id}
          value={value}
          spellCheck={false}
          aria-invalid={error !== null}
          aria-describedby={`${id}-status`}
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => {
            if (preRef.current) preRef.current.scrollTop = e.currentTarget.scrollTop;
          }}
          className="absolute inset-0 h-40 w-full resize-none overflow-auto whitespace-pre-wrap break-words bg-transparent p-3 text-transparent caret-slate-900 focus:outline-none focus:ring-2 focus:ring-teal-700/30"
        />
      </div>
      <p id={`${id}-status`} data-testid={`${id}-status`} className={`mt-1 text-sm ${error ? "text-red-700" : "text-emerald-700"}`}>
        {error ? `Not valid JSON: ${error}` : "Valid JSON"}
      </p>
    </div>
  );
}

/** Null when the text parses; otherwise the parser's message (with its position). Empty text is allowed. */
export function jsonError(text: string): string | null {
  if (text.trim() === "") return null;
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const TOKEN = /("(?:\\.|[^"\\])*"\s*:)|("(?:\\.|[^"\\])*"?)|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b|([{}[\],:])/g;

function highlight(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    const [token, key, string, number, literal] = match;
    const colour = key ? "text-sky-800" : string ? "text-emerald-700" : number ? "text-amber-700" : literal ? "text-fuchsia-700" : "text-slate-500";
    out.push(
      <span key={match.index} className={colour}>
        {token}
      </span>,
    );
    last = match.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
