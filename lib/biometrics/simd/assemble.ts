import fs from "node:fs";
import path from "node:path";
import wabtFactory from "wabt";

/** The WebAssembly kernels, each assembled from `<name>.wat` into the committed `<name>-wasm.ts`. */
export const KERNELS = ["dot-kernel", "posting-kernel", "image-kernel", "net-kernel"] as const;
export type KernelName = (typeof KERNELS)[number];

/** A kernel's bytes assembled from its text source (build time and the freshness tests only). */
export async function assembleKernel(name: KernelName): Promise<Uint8Array> {
  const wabt = await wabtFactory();
  const source = fs.readFileSync(path.join(import.meta.dirname, `${name}.wat`), "utf8");
  const module = wabt.parseWat(`${name}.wat`, source, { simd: true });
  try {
    return module.toBinary({}).buffer;
  } finally {
    module.destroy();
  }
}
