import path from "node:path";
import { pathToFileURL } from "node:url";

// The only module that reaches the biometric engine (lib/biometrics). Uploads, job handlers and the
// server's shutdown go through getEngine(), so a different deployment (issue 5's workers) changes
// one place.
//
// The engine is loaded at run time instead of imported: its worker pool starts threads from a
// path under the project folder, and Turbopack, seeing `new Worker(<project path>)`, tries to bundle
// the whole project. Loaded this way it stays plain TypeScript run by tsx, exactly as its worker
// threads already run it.

export type Engine = typeof import("@/lib/biometrics");
export type ExtractionOptions = import("@/lib/biometrics").ExtractionOptions;

const state = globalThis as unknown as { __rhinariumEngine?: Promise<Engine> };

async function loadEngine(): Promise<Engine> {
  const entry = pathToFileURL(path.join(/* turbopackIgnore: true */ process.cwd(), "lib", "biometrics", "index.ts")).href;
  if (process.env.NEXT_RUNTIME) {
    // Inside Next's server Node cannot import .ts by itself; tsx's loader hooks can.
    const { register } = await import("tsx/esm/api");
    register();
  }
  return (await import(/* turbopackIgnore: true */ entry)) as Engine;
}

export function getEngine(): Promise<Engine> {
  state.__rhinariumEngine ??= loadEngine();
  return state.__rhinariumEngine;
}

export async function shutdownEngine(): Promise<void> {
  if (state.__rhinariumEngine) await (await state.__rhinariumEngine).shutdownEngine();
}
