/** The compiled engine worker, relative to the dist dir of the build it belongs to. */
export const ENGINE_WORKER: string;
/** Compiles the engine's worker into `<distDir>/engine/` (replacing it); resolves to the worker's path. */
export function compileEngine(distDir: string): Promise<string>;
/** esbuild with the options every compiled part of a build shares; copies the data files the bundled modules open beside the output. */
export function bundle(options: import("esbuild").BuildOptions): Promise<import("esbuild").BuildResult<{ metafile: true }>>;
