import { spawn, type ChildProcess } from "node:child_process";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { freePort } from "./server";

// A local S3-compatible server for tests: moto_server from the machine's Python, on 127.0.0.1.

export interface MotoServer {
  endpoint: string;
  /** Credentials moto accepts; the S3 store reads them from the environment like any AWS SDK client. */
  env: { AWS_ACCESS_KEY_ID: string; AWS_SECRET_ACCESS_KEY: string; AWS_REGION: string };
  createBucket(name: string): Promise<void>;
  storageUrl(bucket: string, prefix?: string): string;
  stop(): Promise<void>;
}

export async function startMoto(): Promise<MotoServer> {
  const port = await freePort();
  const child: ChildProcess = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited:\n${output}`);
    if (await fetch(endpoint).then(() => true, () => false)) break;
    if (Date.now() > deadline) throw new Error(`moto_server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const env = { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_REGION: "us-east-1" };
  return {
    endpoint,
    env,
    async createBucket(name) {
      const client = new S3Client({ endpoint, region: env.AWS_REGION, forcePathStyle: true, credentials: { accessKeyId: "test", secretAccessKey: "test" } });
      await client.send(new CreateBucketCommand({ Bucket: name }));
      client.destroy();
    },
    storageUrl: (bucket, prefix) => `s3://${bucket}${prefix ? `/${prefix}` : ""}?endpoint=${encodeURIComponent(endpoint)}&region=${env.AWS_REGION}`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
