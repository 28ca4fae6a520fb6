import fs from "node:fs";
import path from "node:path";
import wabtFactory from "wabt";

/** The kernel's bytes assembled from its text source (build time and the freshness test only). */
export async function assembleDotKernel(): Promise<Uint8Array> {
  const wabt = await wabtFactory();
  const source = fs.readFileSync(path.join(import.meta.dirname, "dot-kernel.wat"), "utf8");
  const module = wabt.parseWat("dot-kernel.wat", source, { simd: true });
  try {
    return module.toBinary({}).buffer;
  } finally {
    module.destroy();
  }
}
