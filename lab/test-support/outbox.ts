import fs from "node:fs";
import path from "node:path";
import { OUTBOX_DIR } from "@/lib/mail";

/** The messages in DATA_DIR/outbox (newest last), with their text decoded from quoted-printable. */
export function outboxMessages(dataDir: string): { file: string; to: string; subject: string; text: string }[] {
  const dir = path.join(dataDir, OUTBOX_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .sort()
    .map((name) => {
      const file = path.join(dir, name);
      const raw = fs.readFileSync(file, "utf8");
      const split = raw.indexOf("\n\n");
      const head = raw.slice(0, split);
      const header = (name: string) => new RegExp(`^${name}: (.*)$`, "mi").exec(head)?.[1] ?? "";
      const body = raw.slice(split + 2);
      const text = /quoted-printable/i.test(header("Content-Transfer-Encoding"))
        ? Buffer.from(body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8")
        : body;
      return { file, to: header("To"), subject: header("Subject"), text };
    });
}

/** The invitation link's token in a message, or null when it holds none. */
export function invitationTokenIn(text: string): string | null {
  return /\/invite\/([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? null;
}
