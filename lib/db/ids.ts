import { randomBytes } from "node:crypto";

// Row ids made in code, where the id is needed before the row is written (a registration job's id
// is set on its pet first, which serialises concurrent starts): the same form as Prisma's @default(cuid())
// ids, so every job id looks alike ("c" + 24 lowercase base-36 characters).

let counter = 0;

/** "c", the time in ms (8 base-36 digits), a per-process counter (4), then 12 random base-36 characters. */
export function newCuid(now = Date.now()): string {
  counter = (counter + 1) % 36 ** 4;
  const random = [...randomBytes(12)].map((b) => (b % 36).toString(36)).join("");
  return `c${now.toString(36).padStart(8, "0").slice(-8)}${counter.toString(36).padStart(4, "0")}${random}`;
}
