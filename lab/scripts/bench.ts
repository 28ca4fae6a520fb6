/**
 * npm run bench [-- --only api,uploads,jobs,identification,gallery,api-identification --pets 1000,10000,100000 --db-pets 1000,100000
 *   --db postgres,pglite --api-pets 500 --genuine 50 --strangers 20 --settings hard,real --distractor-subjects 300 --connections 16
 *   --seconds 10 --jobs 20 --uploads 60 --no-build --write]
 * Service figures beside their references, measured in one run on this machine: API throughput and
 * latency (autocannon, a separate process) vs a bare Node http server answering the same JSON, in
 * PostgreSQL and PGlite mode; uploads vs sharp decoding the same images; job latency seen by a polling
 * client (in-process runner and a BullMQ worker) vs the engine alone; 1:N latency, rank-1 and memory
 * at each gallery size; 1:N through the API of the embedded default on a gallery registered through it (`api-identification`,
 * not in the default set: registering its pets takes minutes). Prints markdown; --write puts it into docs/benchmarks.md between its markers.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { WARMUP_SECONDS, type LoadResult } from "@/lab/bench/api-load";
import { benchGalleryLoad, type GalleryLoadResult } from "@/lab/bench/gallery-load";
import { benchIdentification, PROBE_SETTINGS, type GallerySizeResult, type ProbeRow, type ProbeSetting } from "@/lab/bench/identification";
import { benchApiIdentification, type ApiIdentificationFigures } from "@/lab/bench/api-identification";
import { benchApi, benchJobs, benchUploads, type ApiFigures, type JobFigures, type UploadFigures } from "@/lab/bench/service";
import { mib, ms, num, pct, table } from "@/lab/bench/stats";
import { shutdownEngine } from "@/lib/engine";
import { apiClient, createTestDatabase, deleteRedisKeys, ensureRedis, REDIS_URL, startWorker, testQueuePrefix } from "@/lab/test-support/scale";
import { buildOnce, ops, startServer, type TestServer } from "@/lab/test-support/server";

const { values } = parseScriptArgs({
  name: "bench",
  description: "Service figures beside their references, measured in one run on this machine (docs/benchmarks.md).",
  options: {
    only: { type: "string", default: "api,uploads,jobs,identification,gallery" },
    pets: { type: "string", default: "1000,10000" },
    "db-pets": { type: "string", default: "1000" },
    "api-pets": { type: "string", default: "500" },
    db: { type: "string", default: "postgres,pglite" },
    genuine: { type: "string", default: "50" },
    "distractor-subjects": { type: "string", default: "300" },
    settings: { type: "string", default: "hard,real" },
    strangers: { type: "string", default: "20" },
    connections: { type: "string", default: "16" },
    seconds: { type: "string", default: "10" },
    jobs: { type: "string", default: "20" },
    uploads: { type: "string", default: "60" },
    "no-build": { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const only = new Set(values.only.split(","));

/** `--settings`: probe settings by name (identification.ts PROBE_SETTINGS), refused with the list when one is unknown. */
function probeSettings(list: string): ProbeSetting[] {
  const names = list.split(",");
  const unknown = names.filter((name) => !(PROBE_SETTINGS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    console.error(`bench: unknown --settings ${unknown.join(", ")} (one or more of ${PROBE_SETTINGS.join(", ")})`);
    process.exit(2);
  }
  return names as ProbeSetting[];
}
const load = { connections: Number(values.connections), seconds: Number(values.seconds) };
const log = (line: string) => console.error(`[bench] ${line}`);
/** Report sections by the block of docs/benchmarks.md they go to (`<!-- bench:BLOCK:start -->`). */
const sections = { service: [] as string[], identification: [] as string[], gallery: [] as string[], "api-identification": [] as string[] };

async function withServer<T>(options: Parameters<typeof startServer>[0], run: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await startServer(options);
  try {
    return await run(server);
  } finally {
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
}

async function withPostgres<T>(purpose: string, run: (url: string) => Promise<T>): Promise<T> {
  const database = await createTestDatabase(`bench_${purpose}`);
  try {
    return await run(database.url);
  } finally {
    await database.drop();
  }
}

function apiSection(figures: { mode: string; api: ApiFigures }[]): string {
  const rows = figures.flatMap(({ mode, api }) =>
    (["get", "post", "patch"] as const).map((verb) => {
      const { server, ceiling } = api[verb];
      return [
        `${{ get: "`GET /v2/pets/{id}`", post: "`POST /v2/pets`", patch: "`PATCH /v2/pets/{id}`" }[verb]} (${mode})`,
        `${num(server.requestsPerSecond)} req/s`,
        `${num(ceiling.requestsPerSecond)} req/s`,
        `**${pct(server.requestsPerSecond / ceiling.requestsPerSecond)}**`,
        `${server.p50} / ${server.p99} ms`,
        `${ceiling.p50} / ${ceiling.p99} ms`,
        `${server.non2xx + server.errors}`,
      ];
    }),
  );
  const cpu = (r: LoadResult, name: string) => (r.cpuMicrosPerRequest[name] === undefined ? "–" : `${r.cpuMicrosPerRequest[name].toFixed(1)} µs`);
  const cpuRows = figures.map(({ mode, api: { get } }) => [
    `\`GET /v2/pets/{id}\` (${mode})`,
    `${cpu(get.server, "server")} (ceiling ${cpu(get.ceiling, "server")})`,
    cpu(get.server, "postgres"),
    `${cpu(get.server, "autocannon")} (ceiling ${cpu(get.ceiling, "autocannon")})`,
  ]);
  const databaseOnly = figures.find((f) => f.api.get.databaseOnly !== undefined)?.api.get.databaseOnly;
  return [
    `### API under load (${load.connections} connections, ${load.seconds} s each, on a server that has rendered a dashboard page, after ${WARMUP_SECONDS} s of warm-up, autocannon in its own process)`,
    "",
    table(["call", "Rhinarium", "bare http ceiling", "ratio", "p50 / p99", "ceiling p50 / p99", "non-2xx + errors"], rows),
    "",
    "CPU time per read over the measured run (user + system, all threads, from /proc; PostgreSQL: every `postgres` process of the machine):",
    "",
    table(["call", "server process", "PostgreSQL", "autocannon"], cpuRows),
    ...(databaseOnly === undefined
      ? []
      : [
          "",
          `The work of one read without HTTP (key from the process's key cache, pet read, metering row buffered, as in the server, through Prisma, ${load.connections} concurrent callers in one process): **${num(databaseOnly)} reads/s**.`,
        ]),
  ].join("\n");
}

function uploadSection(u: UploadFigures): string {
  return [
    `### Uploads (${u.images} nose images, ${u.concurrency} clients at once, PostgreSQL mode)`,
    "",
    table(
      ["figure", "measured", "reference: sharp decoding the same JPEGs alone", "ratio"],
      [[
        "nose image uploads (decode, quality, template, store, row)",
        `${u.uploadsPerSecond.toFixed(1)} images/s (p50 ${ms(u.uploadP50)}, p95 ${ms(u.uploadP95)})`,
        `${u.decodesPerSecond.toFixed(1)} images/s`,
        pct(u.uploadsPerSecond / u.decodesPerSecond),
      ]],
    ),
  ].join("\n");
}

function jobSection(figures: { mode: string; jobs: JobFigures }[]): string {
  const rows = figures.flatMap(({ mode, jobs }) => [
    [
      `verification (${mode})`,
      `${ms(jobs.verification.p50)} / ${ms(jobs.verification.p95)}`,
      `${ms(jobs.engineVerification.p50)} / ${ms(jobs.engineVerification.p95)}`,
      `${(jobs.verification.p50 / jobs.engineVerification.p50).toFixed(1)}×`,
    ],
    [`identification, ${jobs.identification.galleryPets} pets (${mode})`, `${ms(jobs.identification.p50)} / ${ms(jobs.identification.p95)}`, "", ""],
  ]);
  const stall = figures.map(({ mode, jobs }) => {
    const u = jobs.underLoad;
    return [mode, `${u.identifications}`, `${ms(u.enrolled.p50)} / ${ms(u.enrolled.p95)}`, `${ms(u.unknown.p50)} / ${ms(u.unknown.p95)}`, `${u.get.calls}`, `${ms(u.get.p50)} / **${ms(u.get.p99)}** / ${ms(u.get.max)}`, `${u.get.failed}`];
  });
  return [
    `### Jobs end to end (start → SUCCESS seen by a client polling every 50 ms; ${figures[0]?.jobs.jobs ?? 0} jobs each, one at a time)`,
    "",
    table(["job", "p50 / p95", "reference: engine verifyPet alone, same captures", "p50 ratio"], rows),
    "",
    "### No stall: two clients identifying at once (an enrolled pet; an animal nobody enrolled), a third reading a pet every 25 ms",
    "",
    table(["mode", "identifications", "enrolled p50 / p95", "unknown p50 / p95", "pet GETs meanwhile", "GET p50 / p99 / max", "failed GETs (resets, errors)"], stall),
  ].join("\n");
}

function identificationSection(results: GallerySizeResult[], poolTemplates: number, sets: { setting: ProbeSetting; enrolled: number; strangers: number }[]): string {
  const base = results[0];
  const label = (r: ProbeRow) => (r.kind === "enrolled" ? `enrolled, ${r.setting} setting` : `unknown animals, ${r.setting} setting`);
  const rows = results.flatMap((result) =>
    result.rows.map((r, i) => {
      const ref = base.rows[i];
      const delta = result === base ? "" : ` (${r.rank1 >= ref.rank1 ? "=" : "−"}${Math.abs((r.rank1 - ref.rank1) * 100).toFixed(0)} pt)`;
      return [
        num(result.pets),
        `${label(r)} (${r.probes})`,
        `${ms(r.p50)} / **${ms(r.p95)}** / ${ms(r.max)}`,
        r.kind === "enrolled" ? `${pct(r.rank1)}${delta}` : "–",
        r.kind === "enrolled" ? pct(r.found) : `**${pct(r.rank1)}**${delta}`,
        pct(r.deep),
        `${ms(r.fastMs)} / ${r.deep > 0 ? ms(r.deepMs) : "–"}`,
        ms(r.cpuMs),
        `${r.shortlisted.toFixed(0)} / ${r.reranked.toFixed(0)} / ${r.compared.toFixed(0)}`,
      ];
    }),
  );
  const memory = results.map((r) => [
    num(r.pets),
    `${(r.galleryBytes / r.pets).toFixed(0)} B (${mib(r.galleryBytes)})`,
    `${(r.rssBytes / r.pets / 1024).toFixed(1)} KiB (${mib(r.rssBytes)})`,
    `${num(r.upsertPerSecond)} pets/s`,
    `${num(r.savePerSecond)} / ${num(r.restorePerSecond)} pets/s; another task waits ≤ ${ms(r.saveStallMs)}`,
  ]);
  // Where a search's CPU goes, step by step (mean a search; a step a search did not reach counts 0).
  const step = (r: ProbeRow, pass: string, steps: string[]) =>
    steps.some((name) => `${pass} ${name}` in r.stepCpuMs) ? steps.map((name) => ms(r.stepCpuMs[`${pass} ${name}`] ?? 0)).join(" / ") : "–";
  const steps = results.flatMap((result) =>
    result.rows.map((r) => [
      num(result.pets),
      label(r),
      step(r, "fast", ["first stage", "light", "full"]),
      step(r, "deep", ["first stage", "light", "full"]),
      step(r, "turned", ["views", "first stage", "light", "full"]),
      ms(Object.values(r.stepCpuMs).reduce((sum, value) => sum + value, 0)),
    ]),
  );
  const described = sets.map((s) => `${s.setting}: ${s.enrolled} enrolled subjects probed with 3 new captures, ${s.strangers} never enrolled`).join("; ");
  return [
    `### 1:N through identifyInGallery (${described}; distractors mixed from ${poolTemplates} templates of other noses)`,
    "",
    table(
      ["enrolled pets", "probes", "p50 / p95 / max", "rank-1", "found (enrolled) / matching nobody (unknown)", "deep pass", "median fast pass / deep pass", "median CPU time (all threads)", "shortlisted / lightly compared / fully compared"],
      rows,
    ),
    "",
    "Where a search's CPU goes (all threads, mean a search, each step from its start to the next one's): the fast pass, the deep pass and the turned pass, each by its first stage, light comparison and full matching (the turned pass also reading the quarter-turned views the probe's upload made, decision 0042).",
    "",
    table(["enrolled pets", "probes", "fast: first stage / light / full", "deep: first stage / light / full", "turned: views / first stage / light / full", "sum"], steps),
    "",
    table(["enrolled pets", "gallery bytes per pet", "RSS growth per pet", "gallery load (search keys into the engine)", "snapshot to disk: save / restore (restart); longest wait of another task during the save"], memory),
  ].join("\n");
}

function galleryLoadSection(results: GalleryLoadResult[]): string {
  const rate = (pets: number, millis: number) => `${ms(millis)} (${num(pets / (millis / 1000))} pets/s)`;
  return [
    `### 1:N end to end on PostgreSQL and PGlite (the gallery manager of a worker; the first probe setting's enrolled pets and probes, distractors as above; rows as a registration writes them)`,
    "",
    table(
      ["database", "enrolled pets", "written image rows: templates / search keys", "start-up preload from the database (search keys)", "preload CPU a pet: this process / PostgreSQL (pets/s two cores would load)", "restarted process: preload from the snapshot on disk (CPU a pet: this process / PostgreSQL)", "reading the gallery rows alone (no engine)", "identify p50 / p95 (shortlist's templates read from the database)", "rank-1", "unknown animals: p50 / p95", "matching nobody", "one deep pass's light templates (368 pets) read from the database / again (kept in memory)", "identify right after another process enrolled a pet"],
      results.map((g) => {
        const s = g.search;
        // A gallery of copies is loaded, not searched (lab/bench/gallery-load.ts): the identification block searches that size.
        const searched = s ? [`${ms(s.p50)} / ${ms(s.p95)}`, pct(s.rank1), `${ms(s.unknownP50)} / ${ms(s.unknownP95)}`, pct(s.nobody), `${ms(s.lightReadMs)} / ${ms(s.lightReadAgainMs)}`, ms(s.afterChangeMs)] : Array<string>(6).fill("–");
        const pets = g.copied > 0 ? `${num(g.pets)} (${num(g.pets - g.copied)} written, ${num(g.copied)} copied)` : num(g.pets);
        return [g.mode === "postgres" ? "PostgreSQL" : "PGlite", pets, `${num(g.templateRows)}: ${mib(g.templateBytes)} / ${mib(g.searchKeyBytes)}`, rate(g.pets, g.loadMs), `${((g.loadCpuMs / g.pets) * 1000).toFixed(0)} µs / ${((g.loadPostgresCpuMs / g.pets) * 1000).toFixed(0)} µs (${num((2 * g.pets * 1000) / (g.loadCpuMs + g.loadPostgresCpuMs))})`, `${rate(g.pets, g.restartMs)} (${((g.restartCpuMs / g.pets) * 1000).toFixed(0)} µs / ${((g.restartPostgresCpuMs / g.pets) * 1000).toFixed(0)} µs)`, rate(g.pets, g.readMs), ...searched];
      }),
    ),
  ].join("\n");
}

function apiIdentificationSection(results: ApiIdentificationFigures[]): string {
  return [
    `### 1:N through the API (embedded default: PGlite, in-process jobs; a gallery registered through the API, then each identification timed from its POST to the poll, every ${results[0]?.pollMs ?? 0} ms, that sees it SUCCESS)`,
    "",
    table(
      ["probes", "enrolled pets (registered in)", "enrolled: p50 / p95 / max", "rank-1", "unknown animals: p50 / p95 / max", "matching nobody", "two clients at once: identification p50 / p95", "meanwhile a pet GET: p50 / p99 / max, failed"],
      results.map((r) => [
        `${r.setting} (${r.enrolled.probes} enrolled, ${r.unknown.probes} unknown)`,
        `${num(r.pets)} (${(r.registerSeconds / 60).toFixed(1)} min)`,
        `${ms(r.enrolled.p50)} / ${ms(r.enrolled.p95)} / ${ms(r.enrolled.max)}`,
        pct(r.enrolled.rank1),
        `${ms(r.unknown.p50)} / ${ms(r.unknown.p95)} / ${ms(r.unknown.max)}`,
        pct(r.unknown.nobody),
        `${ms(r.underLoad.p50)} / ${ms(r.underLoad.p95)} (${r.underLoad.identifications})`,
        `${ms(r.underLoad.get.p50)} / ${ms(r.underLoad.get.p99)} / ${ms(r.underLoad.get.max)}, ${r.underLoad.get.failed} of ${num(r.underLoad.get.calls)}`,
      ]),
    ),
  ].join("\n");
}

async function main(): Promise<void> {
  const started = Date.now();
  if (values["no-build"]) process.env.CONTRACT_SKIP_BUILD = "1";
  const needsServer = ["api", "uploads", "jobs", "api-identification"].some((s) => only.has(s));
  if (needsServer) {
    log("next build");
    await buildOnce();
  }
  const quiet = { LOG_LEVEL: "error" };
  // The load is one key at full speed: the per-key limit (50/s) would answer most calls with 429.
  // Raised, the limiter still runs on every call; the figure is the service's, not the limit's.
  const unlimited = { ...quiet, API_RATE_LIMIT_PER_SECOND: "1000000", API_RATE_LIMIT_BURST: "1000000" };

  const api: { mode: string; api: ApiFigures }[] = [];
  const jobs: { mode: string; jobs: JobFigures }[] = [];
  if (only.has("api") || only.has("uploads") || only.has("jobs")) {
    await withPostgres("pg", (databaseUrl) =>
      withServer({ databaseUrl, env: unlimited }, async (server) => {
        if (only.has("api")) {
          log("API, PostgreSQL mode");
          api.push({ mode: "PostgreSQL", api: await benchApi(server, load, databaseUrl) });
        }
        if (only.has("uploads")) {
          log("uploads");
          const account = await ops(server.env, "account:create", "--name", "Bench uploads");
          sections.service.push(uploadSection(await benchUploads(apiClient(server.baseUrl, account.apiKey as string), Number(values.uploads), 4)));
        }
        if (only.has("jobs")) {
          log("jobs, in-process runner");
          jobs.push({ mode: "PostgreSQL, in-process runner", jobs: await benchJobs(server, Number(values.jobs)) });
        }
      }),
    );
  }
  if (only.has("api")) {
    log("API, PGlite mode");
    await withServer({ env: unlimited }, async (server) => void api.push({ mode: "PGlite", api: await benchApi(server, load) }));
    sections.service.unshift(apiSection(api));
  }
  if (only.has("jobs")) {
    await ensureRedis();
    const prefix = testQueuePrefix();
    try {
      await withPostgres("workers", (databaseUrl) =>
        withServer({ databaseUrl, env: { ...quiet, REDIS_URL, JOB_QUEUE_PREFIX: prefix } }, async (server) => {
          const worker = startWorker({ ...process.env, DATABASE_URL: databaseUrl, REDIS_URL, JOB_QUEUE_PREFIX: prefix, DATA_DIR: server.dataDir, LOG_LEVEL: "error" });
          try {
            log("jobs, BullMQ worker process");
            jobs.push({ mode: "PostgreSQL + Redis, one worker process", jobs: await benchJobs(server, Number(values.jobs)) });
          } finally {
            await worker.kill("SIGTERM");
          }
        }),
      );
    } finally {
      await deleteRedisKeys(prefix);
    }
    sections.service.push(jobSection(jobs));
  }
  const dataset = {
    genuine: Number(values.genuine),
    distractorSubjects: Number(values["distractor-subjects"]),
    difficulty: "normal" as const,
    strangers: Number(values.strangers),
    settings: probeSettings(values.settings),
    cacheDir: path.join(os.tmpdir(), "rhinarium-bench-cache"),
    log,
  };
  if (only.has("identification")) {
    const { results, poolTemplates, sets } = await benchIdentification({ ...dataset, sizes: values.pets.split(",").map(Number) });
    sections.identification.push(identificationSection(results, poolTemplates, sets));
  }
  if (only.has("gallery")) {
    const results: GalleryLoadResult[] = [];
    for (const pets of values["db-pets"].split(",").map(Number)) {
      for (const mode of values.db.split(",") as ("postgres" | "pglite")[]) results.push(await benchGalleryLoad(mode, pets, dataset));
    }
    sections.gallery.push(galleryLoadSection(results));
  }
  if (only.has("api-identification")) {
    const results: ApiIdentificationFigures[] = [];
    for (const setting of dataset.settings) {
      // Unlimited, as for the API figures: the timing clients and the reader share one key, above its per-key limit.
      await withServer({ env: unlimited }, async (server) => void results.push(await benchApiIdentification(server, Number(values["api-pets"]), setting, dataset)));
    }
    sections["api-identification"].push(apiIdentificationSection(results));
  }
  await shutdownEngine();

  const load1 = os.loadavg()[0];
  const header = `Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.availableParallelism()} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, by \`npm run bench -- ${process.argv.slice(2).join(" ")}\` (${((Date.now() - started) / 60_000).toFixed(1)} min; load average at the end ${load1.toFixed(1)}: other processes shared the machine).`;
  for (const [block, parts] of Object.entries(sections)) {
    if (parts.length === 0) continue;
    const report = [header, ...parts].join("\n\n");
    console.log(`${report}\n`);
    if (values.write) writeIntoDocs(block, report);
  }
}

/**
 * Replaces the generated figures between one pair of markers of docs/benchmarks.md
 * (`<!-- bench:service:start -->`, `bench:identification`, `bench:gallery`), keeping the prose around them.
 */
function writeIntoDocs(block: string, report: string): void {
  const file = path.join(process.cwd(), "docs", "benchmarks.md");
  const start = `<!-- bench:${block}:start -->`;
  const end = `<!-- bench:${block}:end -->`;
  let text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "# Benchmarks\n";
  if (!text.includes(start)) text += `\n${start}\n${end}\n`;
  const before = text.slice(0, text.indexOf(start) + start.length);
  const after = text.slice(text.indexOf(end));
  fs.writeFileSync(file, `${before}\n${report}\n${after}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
