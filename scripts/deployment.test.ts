import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readEnv } from "@/lib/env";
import { HEALTH_PATHS } from "@/lib/server/health";
import { ENGINE_WORKER } from "./build-engine.mjs";

// The deployment files checked as far as this machine can without a container runtime: compose.yaml
// wires the services it names, with settings the service accepts, and the Dockerfile builds in stages
// whose last one carries no dev or test packages and runs unprivileged.

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

  it("builds in stages: dependencies, the production build without dev packages, and an unprivileged runtime", () => {
    expect(stages.map((s) => s.name)).toEqual(["deps", "build", "runtime"]);
    const [deps, build, runtime] = stages;
    // The engine's native kernel is an optional dependency: its sources and a compiler are there when npm ci builds it.
    expect(deps.text).toMatch(/apt-get install[^\n]* g\+\+/);
    expect(deps.text).toMatch(/^COPY native \.\/native$/m);
    expect(deps.text).toMatch(/npm ci[^\n]*&& test -f native\/kernels\/build\/Release\/kernels\.node/);
    expect(build.text).toMatch(/npm run build && test -f \.next\/engine\/worker\.mjs \\\n\s+&& npm prune --omit=dev[^\n]*\\\n\s+&& node scripts\/build-processes\.mjs --check/);
    expect(runtime.text).not.toMatch(/npm (ci|install)/);
    expect(runtime.text).toMatch(/^USER rhinarium$/m);
    expect(runtime.text).toMatch(/CMD \["node", "scripts\/server\.mjs"\]/);
    expect(runtime.text).toMatch(/\/readyz/);
    // The packages pruned there are dev dependencies only: nothing a process imports at run time. The
    // TypeScript loader and the compiler are among them.
    const pkg = JSON.parse(read("package.json")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    for (const needed of ["next", "sharp", "@prisma/client", "bullmq", "commander"]) expect(pkg.dependencies[needed], needed).toBeDefined();
    for (const tool of ["tsx", "esbuild", "vitest"]) expect(pkg.devDependencies[tool], tool).toBeDefined();
  });

  it("compiles the engine's worker and the process entries in the build stage, where the processes look for them", () => {
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBe("next build && node scripts/build-engine.mjs && node scripts/build-processes.mjs");
    expect(stages[1].text).toContain(`test -f ${path.posix.join(".next", ENGINE_WORKER)}`);
    // The worker, ops and db:migrate entries run their compiled build; ops answers --help from it.
    for (const script of ["worker", "ops", "db:migrate"]) expect(pkg.scripts[script]).toMatch(/^node scripts\/\w+\.mjs$/);
    for (const entry of ["scripts/worker.mjs", "scripts/ops.mjs", "scripts/db.mjs"]) expect(read(entry)).toMatch(/importProcessEntry\("\w+"\)/);
    // No process's code loads TypeScript: tsx serves only the engine run from its sources (tests, the lab).
    const runtimeCode = ["app", "components", "lib", "instrumentation.ts", "proxy.ts", ...["server", "start", "worker", "ops", "db", "build-slots", "build-engine", "build-processes"].map((s) => `scripts/${s}.mjs`)];
    const tsxUsers = runtimeCode
      .flatMap((entry) => (fs.statSync(path.join(root, entry)).isFile() ? [entry] : fs.readdirSync(path.join(root, entry), { recursive: true }).map((f) => path.join(entry, String(f)))))
      .filter((file) => /\.(tsx?|mjs)$/.test(file) && !/\.test\.tsx?$/.test(file) && !/^lib\/(synth|bench|test-support|biometrics\/evaluation)\//.test(file))
      .filter((file) => /from "tsx|import\("tsx|resolve\("tsx/.test(read(file)));
    expect(tsxUsers).toEqual(["lib/biometrics/worker-entry.mjs"]);
  });

  it("leaves local builds, data and dependencies out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["node_modules", ".next", "dist", ".git", "data"]) expect(ignored).toContain(entry);
  });
});
