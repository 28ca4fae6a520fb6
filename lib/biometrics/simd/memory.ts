/** A WebAssembly memory page. */
export const PAGE_BYTES = 65_536;

/** Grows a kernel's memory, if need be, so that it holds at least `bytes` bytes. */
export function growMemoryTo(memory: WebAssembly.Memory, bytes: number): void {
  if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE_BYTES));
}
