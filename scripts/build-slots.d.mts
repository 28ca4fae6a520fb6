// Types of scripts/build-slots.mjs (plain JavaScript: `npm start` runs it without a TypeScript loader).
/** A kind of build: its two slot folders, its lock file, the folders it reads, and the files a finished build holds. */
export type BuildKind = { slots: string[]; lock: string; sources: string[]; parts: string[] };
export declare const WEB_BUILD: BuildKind;
export type StartPlan = { action: "serve" | "build"; slot: string } | { action: "refuse"; reason: string };
export declare function sourceHash(root: string, kind?: BuildKind): string;
export declare function readStamp(root: string, slot: string): { hash: string; builtAt: string } | null;
export declare function liveHolders(root: string, slot: string): number[];
export declare function holdSlot(root: string, slot: string, pid?: number): () => void;
export declare function planStart(root: string, hash: string, kind?: BuildKind): StartPlan;
export declare function withBuildLock<T>(root: string, fn: () => Promise<T>, options?: { waitMs?: number; kind?: BuildKind }): Promise<T>;
export declare function ensureBuild(
  root: string,
  build: (slot: string) => Promise<void>,
  log?: (line: string) => void,
  kind?: BuildKind,
): Promise<{ slot: string; built: boolean; release: () => void }>;
