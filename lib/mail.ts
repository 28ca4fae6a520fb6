import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import nodemailer from "nodemailer";
import { readEnv } from "./env";
import { logInfo } from "./log";

// Outgoing e-mail, through nodemailer: to the SMTP relay of SMTP_URL, or, unset (the embedded default), as an
// .eml file in DATA_DIR/outbox that only the service's user can read. The message body may carry a secret (an
// invitation link), so it is never logged: the log line names the recipient and the subject only.

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export const OUTBOX_DIR = "outbox";

function outboxOf(dataDir: string): string {
  return path.join(dataDir, OUTBOX_DIR);
}

/** Sends one message: to the relay, or with none configured into the outbox (tests and operators read the folder). */
export async function sendMail(mail: Mail, env = readEnv()): Promise<void> {
  const message = { from: env.MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text };
  if (env.SMTP_URL) {
    await nodemailer.createTransport(env.SMTP_URL).sendMail(message);
    logInfo("mail.sent", { to: mail.to, subject: mail.subject });
    return;
  }
  const { message: eml } = await nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" }).sendMail(message);
  const dir = outboxOf(env.dataDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID()}.eml`);
  fs.writeFileSync(file, eml as Buffer, { mode: 0o600, flag: "wx" });
  logInfo("mail.outbox", { to: mail.to, subject: mail.subject, file });
}
