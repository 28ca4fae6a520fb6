// Types of scripts/build-slots.mjs (plain JavaScript: `npm start` runs it without a TypeScript loader).
export declare const SLOTS: string[];
export type StartPlan = { action: "serve" | "build"; slot: string } | { action: "refuse"; reason: string };
export declare function sourceHash(root: string): string;
export declare function readStamp(root: string, slot: string): { hash: string; builtAt: string } | null;
export declare function liveHolders(root: string, slot: string): number[];
export declare function holdSlot(root: string, slot: string, pid?: number): () => void;
export declare function planStart(root: string, hash: string): StartPlan;
export declare function withBuildLock<T>(root: string, fn: () => Promise<T>, options?: { waitMs?: number }): Promise<T>;
export declare function ensureBuild(
  root: string,
  build: (slot: string) => Promise<void>,
  log?: (line: string) => void,
): Promise<{ slot: string; release: () => void }>;
