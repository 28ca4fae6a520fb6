import readline from "node:readline";
import { MIN_PASSWORD_LENGTH } from "@/lib/accounts/users";

/** A password piped in (`--password-stdin`): all of stdin, without its final line break. */
export async function readPasswordFromStdin(stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
}

function askHidden(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  // Echo nothing of what is typed (readline writes each keystroke through _writeToOutput).
  const muted = rl as unknown as { _writeToOutput(text: string): void };
  let prompted = false;
  muted._writeToOutput = (text: string) => {
    if (!prompted) process.stderr.write(text);
  };
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write("\n");
      resolve(answer);
    });
    prompted = true;
  });
}

/** Asks twice on the terminal, without echo; refuses when there is no terminal to ask on. */
export async function promptNewPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    throw new Error("no terminal to ask for the password on: pipe it in with --password-stdin");
  }
  const first = await askHidden(`Password (at least ${MIN_PASSWORD_LENGTH} characters): `);
  const second = await askHidden("Password again: ");
  if (first !== second) throw new Error("the two passwords differ");
  return first;
}
