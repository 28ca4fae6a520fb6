// Types of scripts/build-processes.mjs (plain JavaScript: the process entries run it without a TypeScript loader).
import type { BuildKind } from "./build-slots.mjs";
export declare const PROCESS_BUILD: BuildKind;
export declare function importProcessEntry(name: "worker" | "ops" | "db"): Promise<Record<string, unknown>>;
