import { describe, expect, it } from "vitest";
import { assembleKernel } from "./assemble";
import { DOT_KERNEL_WASM_BASE64 } from "./dot-kernel-wasm";
import { IMAGE_KERNEL_WASM_BASE64 } from "./image-kernel-wasm";
import { NET_KERNEL_WASM_BASE64 } from "./net-kernel-wasm";
import { POSTING_KERNEL_WASM_BASE64 } from "./posting-kernel-wasm";

describe("WebAssembly kernels", () => {
  it.each([
    ["dot-kernel", DOT_KERNEL_WASM_BASE64],
    ["posting-kernel", POSTING_KERNEL_WASM_BASE64],
    ["image-kernel", IMAGE_KERNEL_WASM_BASE64],
    ["net-kernel", NET_KERNEL_WASM_BASE64],
  ] as const)("%s is the committed build of its .wat (run `npm run build:wasm` after editing it)", async (name, committed) => {
    expect(Buffer.from(await assembleKernel(name)).toString("base64")).toBe(committed);
  });
});
