import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readEnv } from "@/lib/env";
import { HEALTH_PATHS } from "@/lib/server/health";
import { ENGINE_WORKER } from "./build-engine.mjs";

// The deployment files checked as far as this machine can without a container runtime: compose.yaml
// wires the services it names, with settings the service accepts, and the Dockerfile builds in stages
// whose last one carries no test packages and runs unprivileged.

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");

type Service = { image?: string; build?: string; command?: string[]; environment?: Record<string, string>; healthcheck?: { test: string[] }; depends_on?: Record<string, { condition: string }>; entrypoint?: string[] };

describe("compose.yaml", () => {
  const compose = parse(read("compose.yaml"), { merge: true }) as { services: Record<string, Service> };
  const { services } = compose;
  const env = (name: string) => Object.fromEntries(Object.entries(services[name].environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{NEXTAUTH_SECRET:\?[^}]*\}/, "s".repeat(40)).replace(/\$\{(\w+):-([^}]*)\}/, "$2")]));

  it("runs the web process, workers, PostgreSQL, Redis and an S3-compatible store", () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(["web", "worker", "postgres", "redis", "minio", "minio-bucket"]));
    expect(services.worker.command).toEqual(["node", "scripts/worker.mjs"]);
    expect(fs.existsSync(path.join(root, "scripts/worker.mjs"))).toBe(true);
    expect(services.worker.image).toBe(services.web.image);
  });

  it("gives web and workers one configuration that the service accepts, naming the services of the file", () => {
    expect(env("worker")).toEqual(env("web"));
    const config = readEnv({ ...env("web"), DATA_DIR: "/data" } as unknown as NodeJS.ProcessEnv);
    expect(new URL(config.DATABASE_URL!).hostname).toBe("postgres");
    expect(new URL(config.REDIS_URL!).hostname).toBe("redis");
    const storage = new URL(config.STORAGE_URL!);
    expect(new URL(storage.searchParams.get("endpoint")!).hostname).toBe("minio");
    // The bucket the store uses is the one created at start, with the store's own credentials.
    expect(services["minio-bucket"].entrypoint!.join(" ")).toContain(`store/${storage.hostname}`);
    expect(services.minio.environment).toMatchObject({ MINIO_ROOT_USER: env("web").AWS_ACCESS_KEY_ID, MINIO_ROOT_PASSWORD: env("web").AWS_SECRET_ACCESS_KEY });
  });

  it("starts the web process once its stores are healthy, the workers once the web process is ready (/readyz)", () => {
    const readiness = services.web.healthcheck!.test.join(" ");
    const probed = /127\.0\.0\.1:3000(\/\w+)/.exec(readiness)?.[1];
    expect(HEALTH_PATHS.has(probed!)).toBe(true);
    expect(probed).toBe("/readyz");
    expect(services.web.depends_on).toMatchObject({ postgres: { condition: "service_healthy" }, redis: { condition: "service_healthy" } });
    expect(services.worker.depends_on).toEqual({ web: { condition: "service_healthy" } });
  });
});

describe("Dockerfile", () => {
  const stages = read("Dockerfile")
    .split(/^FROM /m)
    .slice(1)
    .map((text) => ({ name: /^\S+ AS (\S+)/.exec(text)?.[1], text }));

  it("builds in stages: dependencies, the production build without test packages, and an unprivileged runtime", () => {
    expect(stages.map((s) => s.name)).toEqual(["deps", "build", "runtime"]);
    const [, build, runtime] = stages;
    expect(build.text).toMatch(/npm run build && test -f \.next\/engine\/worker\.mjs && npm prune --omit=dev/);
    expect(runtime.text).not.toMatch(/npm (ci|install)/);
    expect(runtime.text).toMatch(/^USER rhinarium$/m);
    expect(runtime.text).toMatch(/CMD \["node", "scripts\/server\.mjs"\]/);
    expect(runtime.text).toMatch(/\/readyz/);
    // The packages pruned there are dev dependencies only: nothing the server imports at run time.
    const pkg = JSON.parse(read("package.json")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    for (const needed of ["next", "tsx", "sharp", "@prisma/client"]) expect(pkg.dependencies[needed], needed).toBeDefined();
  });

  it("compiles the engine's worker in the build stage, where the web process looks for it", () => {
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBe("next build && node scripts/build-engine.mjs");
    expect(stages[1].text).toContain(`test -f ${path.posix.join(".next", ENGINE_WORKER)}`);
    // The web process's code loads no TypeScript: tsx serves only the CLI entries and the engine run from its sources.
    const tsxUsers = ["app", "components", "lib", "instrumentation.ts", "proxy.ts", "scripts/server.mjs", "scripts/start.mjs"]
      .flatMap((entry) => (fs.statSync(path.join(root, entry)).isFile() ? [entry] : fs.readdirSync(path.join(root, entry), { recursive: true }).map((f) => path.join(entry, String(f)))))
      .filter((file) => /\.(tsx?|mjs)$/.test(file) && !/\.test\.tsx?$/.test(file) && !/^lib\/(synth|bench|test-support|biometrics\/evaluation)\//.test(file))
      .filter((file) => /from "tsx|import\("tsx|resolve\("tsx/.test(read(file)));
    expect(tsxUsers).toEqual(["lib/biometrics/worker-entry.mjs"]);
  });

  it("leaves local builds, data and dependencies out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["node_modules", ".next", ".git", "data"]) expect(ignored).toContain(entry);
  });
});
