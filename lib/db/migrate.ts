import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";

// Migrations without the Prisma CLI: its native schema engine cannot be downloaded offline, so the
// official WASM build of the same engine runs in-process, on the driver adapter the app uses.

const projectRoot = /* turbopackIgnore: true */ process.cwd();
export const migrationsDir = path.join(projectRoot, "prisma", "migrations");
const schemaPath = path.join(projectRoot, "prisma", "schema.prisma");
const noFilters = { externalTables: [] as string[], externalEnums: [] as string[] };

type SchemaEngineModule = typeof import("@prisma/schema-engine-wasm/schema_engine_bg");
let engineModule: Promise<SchemaEngineModule> | undefined;

// The package's entry point imports the .wasm file as an ES module, which Node 20 cannot do:
// instantiate it by hand and hand the instance to the generated bindings.
function loadSchemaEngine(): Promise<SchemaEngineModule> {
  engineModule ??= (async () => {
    const require = createRequire(path.join(projectRoot, "package.json"));
    const bindingsPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const bindings = (await import(/* turbopackIgnore: true */ pathToFileURL(bindingsPath).href)) as SchemaEngineModule;
    const wasm = fs.readFileSync(bindingsPath.replace(/\.js$/, ".wasm"));
    const { instance } = await WebAssembly.instantiate(wasm, { "./schema_engine_bg.js": bindings as never });
    bindings.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as (() => void) | undefined)?.();
    return bindings;
  })();
  return engineModule;
}

function readSchema() {
  return [{ path: "schema.prisma", content: fs.readFileSync(schemaPath, "utf8") }];
}

function readMigrationsList() {
  const dirs = fs.existsSync(migrationsDir)
    ? fs.readdirSync(migrationsDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
    : [];
  const lockPath = path.join(migrationsDir, "migration_lock.toml");
  return {
    baseDir: migrationsDir,
    lockfile: { path: "migration_lock.toml", content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok" as const, value: fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8") },
      },
    })),
  };
}

async function startEngine(factory: SqlMigrationAwareDriverAdapterFactory) {
  const { SchemaEngine } = await loadSchemaEngine();
  const schema = readSchema();
  const engine = await SchemaEngine.new(
    { datamodels: schema.map((f) => [f.path, f.content] as [string, string]) },
    () => {},
    bindMigrationAwareSqlAdapterFactory(factory),
  );
  return { engine, schema };
}

/** Applies every migration in prisma/migrations that the database has not seen yet. */
export async function applyMigrations(factory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  const { engine } = await startEngine(factory);
  try {
    const out = await engine.applyMigrations({ migrationsList: readMigrationsList(), filters: noFilters });
    return out.appliedMigrationNames;
  } finally {
    engine.free();
  }
}

/**
 * Writes a new migration: the SQL that takes a database holding every existing migration to the
 * current schema. `factory` must point at a scratch database (the caller uses an in-memory PGlite).
 */
export async function createMigration(factory: SqlMigrationAwareDriverAdapterFactory, name: string): Promise<string | null> {
  await applyMigrations(factory);
  const { engine, schema } = await startEngine(factory);
  try {
    const out = await engine.diff({
      from: { tag: "schemaDatasource", files: schema, configDir: projectRoot },
      to: { tag: "schemaDatamodel", files: schema },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    const sql = out.stdout ?? "";
    if (!/\b(CREATE|ALTER|DROP)\b/.test(sql)) return null;
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
    const dir = path.join(migrationsDir, `${stamp}_${name.replace(/[^a-z0-9_]/gi, "_")}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "migration.sql"), sql);
    const lock = path.join(migrationsDir, "migration_lock.toml");
    if (!fs.existsSync(lock)) fs.writeFileSync(lock, 'provider = "postgresql"\n');
    return dir;
  } finally {
    engine.free();
  }
}
