import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { appearanceJpeg, blurredNoseCapture, noseCapture } from "@/lab/test-support/nose-images";
import { PASSWORD, stateFile, type E2eState } from "./fixtures";

// Seeds the running e2e server: two accounts (through the ops CLI, which reaches the server's ops
// port), a user of every role, a deliberately failed registration in account A and a registered pet
// in account B (through the public API), and the nose images the journeys drop into the browser.

const run = promisify(execFile);

async function ops(...argv: string[]): Promise<Record<string, string>> {
  return opsWithInput("", ...argv);
}

/** With `stdin` piped in: a password, with `--password-stdin`. */
async function opsWithInput(stdin: string, ...argv: string[]): Promise<Record<string, string>> {
  const env = { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR, DATABASE_URL: "" };
  const running = run(process.execPath, [path.join("scripts", "ops.mjs"), ...argv], { env });
  running.child.stdin?.end(stdin);
  const { stdout } = await running;
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, string>;
  if (result.error) throw new Error(`ops ${argv[0]}: ${result.error}`);
  return result;
}

function api(key: string) {
  const base = `http://127.0.0.1:${process.env.E2E_PORT}/v2`;
  return async (method: string, url: string, body?: unknown): Promise<Record<string, unknown>> => {
    const init: RequestInit = { method, headers: { "x-service-api-key": key } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const res = await fetch(base + url, init);
    const json = (await res.json()) as { data?: Record<string, unknown> };
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json.data!;
  };
}

function jpegForm(bytes: Buffer): FormData {
  const form = new FormData();
  form.set("file", new Blob([new Uint8Array(bytes)], { type: "image/jpeg" }), "image.jpg");
  return form;
}

/** A pet registered through the API from `noses`; answers the pet, one enrolled image and the job. */
async function registerThroughApi(call: ReturnType<typeof api>, metadata: string, noses: Buffer[], appearance: Buffer) {
  const pet = (await call("POST", "/pets", { species: "DOG", breed: "Seed hound", metadata })).id as string;
  const session = (await call("POST", "/capture-sessions", { species: "DOG", purpose: "PET_PROFILE_REGISTRATION", petId: pet })).id as string;
  const imageIds: string[] = [];
  for (const nose of noses) imageIds.push((await call("POST", `/fingerprints:upload?sessionId=${session}`, jpegForm(nose))).id as string);
  await call("POST", `/appearances:upload?sessionId=${session}`, jpegForm(appearance));
  const jobId = (await call("POST", `/pets/${pet}:addFingerprints`, { sessionId: session })).jobId as string;
  for (let i = 0; i < 120; i++) {
    const { status } = await call("GET", `/fingerprint-addition-jobs/${jobId}`);
    if (status !== "PENDING") return { pet, imageId: imageIds[0], jobId, status };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`job ${jobId} did not finish`);
}

async function writeImages(dir: string, prefix: string, images: Buffer[]): Promise<string[]> {
  return images.map((bytes, i) => {
    const file = path.join(dir, `${prefix}-${i}.jpg`);
    fs.writeFileSync(file, bytes);
    return file;
  });
}

/** A PNG (the dropzone takes JPEG only). */
async function writePng(dir: string, jpeg: Buffer): Promise<string> {
  const file = path.join(dir, "photo.png");
  await sharp(jpeg).png().toFile(file);
  return file;
}

export default async function globalSetup(): Promise<void> {
  const dataDir = process.env.E2E_DATA_DIR!;
  const imageDir = path.join(dataDir, "e2e-images");
  fs.mkdirSync(imageDir, { recursive: true });
  // Pet 1 is the one the staff journey registers, verifies and identifies; pet 2 lives in account B.
  const [register, verify, identify, petB, blurred, appearance, impostor] = await Promise.all([
    Promise.all([0, 1, 2, 3, 4].map((i) => noseCapture(1, i))),
    Promise.all([5, 6, 7].map((i) => noseCapture(1, i))),
    Promise.all([8, 9, 10].map((i) => noseCapture(1, i))),
    Promise.all([0, 1, 2, 3, 4].map((i) => noseCapture(2, i))),
    Promise.all([0, 1, 2, 3, 4].map((i) => blurredNoseCapture(3, i))),
    appearanceJpeg(7),
    Promise.all([0, 1, 2].map((i) => noseCapture(4, i))),
  ]);

  const a = await ops("account:create", "--name", "Clinic A", "--plan", "standard");
  const b = await ops("account:create", "--name", "Clinic B", "--plan", "standard");
  const users: E2eState["users"] = {
    staffA: "staff@a.test",
    supportA: "support@a.test",
    managerA: "manager@a.test",
    ownerA: "owner@a.test",
    staffB: "staff@b.test",
    admin: "operator@rhinarium.test",
    lockedA: "guessed@a.test",
  };
  const roles: [string, string, string | null][] = [
    [users.staffA, "staff", a.accountId],
    [users.supportA, "support", a.accountId],
    [users.managerA, "manager", a.accountId],
    [users.ownerA, "owner", a.accountId],
    [users.staffB, "staff", b.accountId],
    [users.admin, "admin", null],
    [users.lockedA, "staff", a.accountId],
  ];
  for (const [email, role, account] of roles) {
    await opsWithInput(PASSWORD, "user:create", "--email", email, "--password-stdin", "--role", role, ...(account ? ["--account", account] : []));
  }

  const failed = await registerThroughApi(api(a.apiKey), '{"name":"Blurry"}', blurred, appearance);
  if (failed.status !== "FAILED") throw new Error(`the blurred registration should fail, it is ${failed.status}`);
  const registeredB = await registerThroughApi(api(b.apiKey), '{"name":"Other clinic pet"}', petB, appearance);
  if (registeredB.status !== "SUCCESS") throw new Error(`account B's registration is ${registeredB.status}`);

  const state: E2eState = {
    accountA: a.accountId,
    accountB: b.accountId,
    keyA: a.apiKey,
    users,
    failedJobId: failed.jobId,
    petB: registeredB.pet,
    petBImageId: registeredB.imageId,
    images: {
      register: await writeImages(imageDir, "register", register),
      verify: await writeImages(imageDir, "verify", verify),
      identify: await writeImages(imageDir, "identify", identify),
      appearance: (await writeImages(imageDir, "appearance", [appearance]))[0],
      impostor: await writeImages(imageDir, "impostor", impostor),
      blurred: (await writeImages(imageDir, "blurred", [blurred[0]]))[0],
      png: await writePng(imageDir, appearance),
    },
  };
  fs.writeFileSync(stateFile(), JSON.stringify(state, null, 1));
  fs.mkdirSync(path.join("docs", "screenshots"), { recursive: true });
}
