import type { Db } from "@/lib/db/connect";
import * as engineDoor from "@/lib/engine";
import { ENGINE_VERSION, packedPetCount, packPets, SnapshotChangedError, type Engine, type IdentificationOutcome, type ProbeTurns } from "@/lib/engine";
import { readEnv } from "@/lib/env";
import { enrolledLightTemplatesByPet, enrolledSearchKeysByPet, enrolledTemplatesByPet } from "@/lib/jobs/templates";
import { logError, logInfo } from "@/lib/log";
import { galleryBatchAfter, galleryPetCount, type GalleryScope } from "./gallery-rows";
import { GallerySnapshots, gallerySnapshotDir } from "./gallery-snapshots";
import { processWide } from "@/lib/process-state";

/** The engine's gallery calls (lib/engine): galleries live in its worker threads. */
export type GalleryEngine = Pick<Engine, "galleryUpsertPets" | "galleryDrop" | "galleryStats" | "identifyInGallery" | "gallerySave" | "galleryRestore" | "engineThreads">;

export type { GalleryScope };

export function galleryKey(scope: GalleryScope): string {
  return `${scope.accountId}/${scope.poolId ?? "*"}/${scope.species}`;
}

/** Pets read from the database per batch when a gallery is loaded (their search keys, not whole templates). */
const LOAD_BATCH_PETS = 1000;
/** Gallery changes older than this are deleted; a process that has not synced for half of it reloads. */
const CHANGE_RETENTION_MS = 7 * 24 * 3600_000;
/**
 * A snapshot is restored only while every change recorded after it is surely kept: saved less than this long ago.
 * One to which changes were applied is saved again after a day, so a gallery in use always has a usable one.
 */
const SNAPSHOT_USABLE_MS = CHANGE_RETENTION_MS - 24 * 3600_000;
const SNAPSHOT_REFRESH_MS = 24 * 3600_000;
/** A gallery is saved again once this many of its pets changed (or this fraction of it): what a restart applies at most. */
const SNAPSHOT_AFTER_CHANGED_PETS = 1000;
const SNAPSHOT_AFTER_CHANGED_FRACTION = 0.05;
/**
 * After a save failed (a full disk, a folder it cannot write), or after a gallery changed during this many saves in a
 * row (each is tried again at the next search), the next save is tried no sooner than this.
 */
const SNAPSHOT_RETRY_MS = 15 * 60_000;
const SNAPSHOT_CHANGED_TRIES = 3;

/** What this process knows of a gallery's snapshot on disk. */
interface SnapshotState {
  savedAt: number;
  /** Pets the snapshot holds. */
  pets: number;
  /** Pets changed (applied to the gallery) since that snapshot. */
  changed: number;
  saving: boolean;
  /** When the last save failed (0: it did not), and how many saves in a row the gallery changed during. */
  failedAt: number;
  overtaken: number;
}

function snapshotState(savedAt = 0, pets = 0): SnapshotState {
  return { savedAt, pets, changed: 0, saving: false, failedAt: 0, overtaken: 0 };
}

interface AccountGalleries {
  /** Id of the last GalleryChange applied to every gallery of the account in this process. */
  cursor: bigint;
  syncedAt: number;
  scopes: Map<string, GalleryScope>;
}

/**
 * The per-process set of 1:N galleries (one per account, search pool and species), held by the
 * engine's worker threads. A gallery is loaded the first time it is searched (or at start-up: `preload`): restored
 * from its snapshot on disk when it has a usable one, else streamed from the database in batches, then saved. Before
 * every identification the account's GalleryChange rows after this process's cursor are applied, so a pet enrolled,
 * deleted or moved by any process (another worker, the web process, the ops CLI) is searched, or not, by the next
 * identification everywhere.
 */
export class GalleryManager {
  private readonly accounts = new Map<string, AccountGalleries>();
  /** One sync or load at a time per account; identifications themselves run concurrently. */
  private readonly accountLocks = new Map<string, Promise<unknown>>();
  private readonly snapshotStates = new Map<string, SnapshotState>();
  private readonly saving = new Set<Promise<void>>();

  /** With `snapshots`, galleries are saved to disk as they load and change, and restored from there (decision 0041). */
  constructor(
    private readonly db: Db,
    private readonly engine: GalleryEngine = engineDoor,
    private readonly snapshots: GallerySnapshots | null = null,
  ) {}

  /** 1:N in the scope's gallery; with a way to turn each probe image (`probeTurns[p]` for `probe[p]`), turned probes are found too. */
  async identify(scope: GalleryScope, probe: Uint8Array[], probeTurns?: ProbeTurns[]): Promise<IdentificationOutcome> {
    const engine = this.engine;
    const search = async () => {
      await this.prepare(scope);
      const loader = (read: typeof enrolledTemplatesByPet) => async (petIds: string[]) =>
        [...(await read(this.db, scope.accountId, petIds))].map(([petId, templates]) => ({ petId, templates }));
      return engine.identifyInGallery(galleryKey(scope), probe, loader(enrolledTemplatesByPet), loader(enrolledLightTemplatesByPet), probeTurns);
    };
    const notLoaded = (error: unknown) => error instanceof Error && error.name === "GalleryNotLoadedError";
    try {
      return await search();
    } catch (error) {
      // The engine worker holding the gallery was replaced (it crashed) after prepare checked it: load it again.
      if (!notLoaded(error)) throw error;
      this.forget(scope);
      try {
        return await search();
      } catch (again) {
        // Loaded just now and still unknown to the engine: no pet was added, the gallery is empty.
        if (!notLoaded(again)) throw again;
        return { candidates: [], details: { searched: 0, shortlisted: 0, reranked: 0, compared: 0, bestRaw: 0 } };
      }
    }
  }

  /** The gallery, loaded and current, as identify would search it. */
  async stats(scope: GalleryScope): Promise<{ pets: number; bytes: number }> {
    await this.prepare(scope);
    return this.engine.galleryStats(galleryKey(scope));
  }

  private forget(scope: GalleryScope): void {
    this.accounts.get(scope.accountId)?.scopes.delete(galleryKey(scope));
  }

  /**
   * Loads, one after the other, the galleries searches will need: for each account and species with enrolled pets,
   * the default pool (what registrations check new prints against) and the named pool the account searches, if any. Called at start-up without
   * being awaited, so galleries are ready before traffic rather than loaded in the first caller's request; a search
   * that arrives meanwhile waits for its own account's load only (the account lock), never for the others'.
   */
  async preload(): Promise<{ galleries: number; ms: number }> {
    const started = Date.now();
    let scopes: GalleryScope[];
    try {
      scopes = await this.scopesInUse();
    } catch (error) {
      logError("gallery-preload-failed", error);
      return { galleries: 0, ms: Date.now() - started };
    }
    for (const scope of scopes) {
      try {
        await this.prepare(scope);
      } catch (error) {
        // The first identification loads it again; one account's failure does not stop the others'.
        logError("gallery-preload-failed", error, { gallery: galleryKey(scope) });
      }
    }
    const ms = Date.now() - started;
    logInfo("galleries-preloaded", { galleries: scopes.length, ms });
    // Images enrolled before registrations wrote their light templates get them now, ahead of the deep passes that read them.
    for (const accountId of new Set(scopes.map((scope) => scope.accountId))) {
      try {
        await this.backfillLightTemplates(accountId);
      } catch (error) {
        logError("light-template-backfill-failed", error, { accountId });
      }
    }
    return { galleries: scopes.length, ms };
  }

  /** Cuts and stores the light templates enrolled images lack (enrolledLightTemplatesByPet fills them), a batch at a time. */
  private async backfillLightTemplates(accountId: string): Promise<void> {
    const where = { accountId, usable: true, petId: { not: null }, lightTemplate: null };
    let left = await this.db.fingerprintImage.count({ where });
    while (left > 0) {
      const rows = await this.db.fingerprintImage.findMany({ where, select: { petId: true }, take: LOAD_BATCH_PETS });
      if (rows.length === 0) break;
      await enrolledLightTemplatesByPet(this.db, accountId, [...new Set(rows.map((row) => row.petId!))]);
      // Bounded by the count at the start, whatever a row that cannot be cut does.
      left -= rows.length;
    }
  }

  private async scopesInUse(): Promise<GalleryScope[]> {
    const enrolled = await this.db.pet.groupBy({ by: ["accountId", "species"], where: { fingerprints: { some: { usable: true } } } });
    const accounts = await this.db.account.findMany({
      where: { id: { in: [...new Set(enrolled.map((e) => e.accountId))] } },
      select: { id: true, searchPoolName: true },
    });
    const pools = await this.db.searchPool.findMany({
      where: { OR: accounts.filter((a) => a.searchPoolName).map((a) => ({ accountId: a.id, name: a.searchPoolName! })) },
      select: { id: true, accountId: true },
    });
    const named = new Map(pools.map((pool) => [pool.accountId, pool.id]));
    // Registrations check new prints against the whole account (the default pool); identifications search the
    // account's named pool when it has one.
    return enrolled.flatMap((e) => {
      const pool = named.get(e.accountId);
      const scopes: GalleryScope[] = [{ accountId: e.accountId, poolId: null, species: e.species }];
      if (pool) scopes.push({ accountId: e.accountId, poolId: pool, species: e.species });
      return scopes;
    });
  }

  /** Frees every gallery of this process (they are loaded again when next searched). */
  async dropAll(): Promise<void> {
    const engine = this.engine;
    const keys = [...this.accounts.values()].flatMap((account) => [...account.scopes.keys()]);
    this.accounts.clear();
    await Promise.all(keys.map((key) => engine.galleryDrop(key)));
  }

  private prepare(scope: GalleryScope): Promise<void> {
    const previous = this.accountLocks.get(scope.accountId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.syncAndLoad(scope));
    this.accountLocks.set(scope.accountId, next);
    void next.finally(() => {
      if (this.accountLocks.get(scope.accountId) === next) this.accountLocks.delete(scope.accountId);
    }).catch(() => undefined);
    return next;
  }

  private async syncAndLoad(scope: GalleryScope): Promise<void> {
    let account = this.accounts.get(scope.accountId);
    if (account && Date.now() - account.syncedAt > CHANGE_RETENTION_MS / 2) {
      // Changes this process has not applied may have been deleted: start again from the database.
      const engine = this.engine;
      await Promise.all([...account.scopes.keys()].map((key) => engine.galleryDrop(key)));
      this.accounts.delete(scope.accountId);
      account = undefined;
    }
    if (!account) {
      // The cursor is read before any pet, so a change committed during the load is applied after it.
      account = { cursor: await this.latestChangeId(scope.accountId), syncedAt: Date.now(), scopes: new Map() };
      this.accounts.set(scope.accountId, account);
    } else {
      await this.forgetLostGalleries(account);
      await this.applyChanges(scope.accountId, account);
    }
    const key = galleryKey(scope);
    if (!account.scopes.has(key)) {
      await this.load(scope, account);
      account.scopes.set(key, scope);
    }
    this.saveWhenDue(scope, account);
  }

  /**
   * An engine worker that crashed is replaced empty: its galleries are loaded again rather than
   * changes applied to them (which would start partial galleries in the new worker).
   */
  private async forgetLostGalleries(account: AccountGalleries): Promise<void> {
    const engine = this.engine;
    for (const key of [...account.scopes.keys()]) {
      if (!(await engine.galleryStats(key)).loaded) account.scopes.delete(key);
    }
  }

  private async latestChangeId(accountId: string): Promise<bigint> {
    const latest = await this.db.galleryChange.findFirst({ where: { accountId }, orderBy: { id: "desc" }, select: { id: true } });
    return latest?.id ?? 0n;
  }

  /** Loads the scope's gallery: from its snapshot when there is a usable one, else from the database (then saved). */
  private async load(scope: GalleryScope, account: AccountGalleries): Promise<void> {
    const restored =
      this.snapshots !== null &&
      (await this.restore(scope, account, this.snapshots).catch((error: unknown) => {
        logError("gallery-snapshot-unusable", error, { gallery: galleryKey(scope) });
        return false;
      }));
    if (!restored) {
      await this.loadFromDatabase(scope);
      // Saved in the background right after (saveWhenDue): a gallery without a snapshot state is due.
      this.snapshotStates.delete(galleryKey(scope));
    }
    await this.db.galleryChange.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - CHANGE_RETENTION_MS) } } });
  }

  private async loadFromDatabase(scope: GalleryScope): Promise<void> {
    const started = Date.now();
    const engine = this.engine;
    const key = galleryKey(scope);
    await engine.galleryDrop(key);
    // One batch read from the database while the engine threads take the previous one: the load runs at the pace of
    // the slower of the two, not of their sum.
    const readBatch = (after: string) => galleryBatchAfter(this.db, scope, after, LOAD_BATCH_PETS);
    let pets = 0;
    let adding: Promise<void> = Promise.resolve();
    try {
      for (let batch = await readBatch(""); batch; ) {
        const current = batch;
        await adding;
        adding = engine.galleryUpsertPets(key, current.pets);
        // Handled here so a failure while the next batch is read is not reported as unhandled; awaited below.
        adding.catch(() => undefined);
        pets += packedPetCount(current.pets);
        batch = await readBatch(current.last);
      }
    } finally {
      await adding.catch(() => undefined);
    }
    await adding;
    // A gallery with no pets yet is a loaded one (every shard created), not one loaded again at each search.
    if (pets === 0) await engine.galleryUpsertPets(key, packPets([]));
    logInfo("gallery-loaded", { gallery: key, pets, ms: Date.now() - started });
  }

  /** Each changed pet is put in, updated in, or taken out of every gallery of the account it (no longer) belongs to. */
  private async applyChanges(accountId: string, account: AccountGalleries): Promise<void> {
    account.cursor = await this.applyChangeRange(accountId, [...account.scopes.values()], account.cursor);
    account.syncedAt = Date.now();
  }

  /**
   * Applies the account's changes after id `after` (up to `upTo`, if given) to the galleries of `scopes`, in batches;
   * resolves the id of the last change applied (`after` when none). Applying a change again is harmless: a pet is put
   * in with its images as the database holds them now, or taken out.
   */
  private async applyChangeRange(accountId: string, scopes: GalleryScope[], after: bigint, upTo?: bigint): Promise<bigint> {
    let cursor = after;
    for (;;) {
      const changes = await this.db.galleryChange.findMany({
        where: { accountId, id: { gt: cursor, ...(upTo === undefined ? {} : { lte: upTo }) } },
        orderBy: { id: "asc" },
        select: { id: true, petId: true },
        take: 5000,
      });
      if (changes.length === 0) return cursor;
      const petIds = [...new Set(changes.map((c) => c.petId))];
      const [pets, templates] = await Promise.all([
        this.db.pet.findMany({ where: { accountId, id: { in: petIds } }, select: { id: true, species: true, poolId: true } }),
        enrolledSearchKeysByPet(this.db, accountId, petIds),
      ]);
      const petById = new Map(pets.map((p) => [p.id, p]));
      const engine = this.engine;
      const updates = scopes.map((scope) =>
        engine.galleryUpsertPets(
          galleryKey(scope),
          // A pet that no longer belongs gets no images, which takes it out.
          packPets(
            petIds.map((petId) => {
              const pet = petById.get(petId);
              const enrolled = templates.get(petId) ?? [];
              const belongs = !!pet && pet.species === scope.species && (!scope.poolId || pet.poolId === scope.poolId);
              return { petId, templates: belongs ? enrolled : [] };
            }),
          ),
        ),
      );
      await Promise.all(updates);
      for (const scope of scopes) {
        const state = this.snapshotStates.get(galleryKey(scope));
        if (state) state.changed += petIds.length;
      }
      cursor = changes[changes.length - 1].id;
    }
  }

  /**
   * The scope's gallery from its snapshot on disk, when that is one of this engine (version, threads), recent enough
   * that every later change is still recorded, and of this database: then the changes after its cursor are applied, and
   * the gallery must hold as many pets as the database says. Resolves false (the gallery dropped) when it is not usable.
   */
  private async restore(scope: GalleryScope, account: AccountGalleries, snapshots: GallerySnapshots): Promise<boolean> {
    const started = Date.now();
    const key = galleryKey(scope);
    const manifest = await snapshots.manifest(key);
    if (!manifest) return false;
    const reject = (reason: string) => {
      logInfo("gallery-snapshot-skipped", { gallery: key, reason });
      return false;
    };
    if (manifest.engineVersion !== ENGINE_VERSION) return reject("engine version");
    if (manifest.shards !== (await this.engine.engineThreads())) return reject("engine threads");
    const savedAt = Date.parse(manifest.savedAt);
    if (!(Date.now() - savedAt < SNAPSHOT_USABLE_MS)) return reject("age");
    const cursor = BigInt(manifest.cursor);
    // A database restored from an earlier backup (or another one) has no such change, or not of that time.
    if (cursor > account.cursor && cursor > (await this.latestChangeId(scope.accountId))) return reject("database behind the snapshot");
    if (cursor > 0n) {
      const change = await this.db.galleryChange.findUnique({ where: { id: cursor }, select: { createdAt: true, accountId: true } });
      if (change && (change.accountId !== scope.accountId || change.createdAt.toISOString() !== manifest.cursorAt)) return reject("another database");
    }
    const engine = this.engine;
    await engine.galleryRestore(key, snapshots.shardPaths(key, manifest.generation, manifest.shards));
    // The changes between the snapshot and this account's cursor (later ones are applied to every gallery of the account).
    if (cursor < account.cursor) await this.applyChangeRange(scope.accountId, [scope], cursor, account.cursor);
    const [held, expected] = await Promise.all([engine.galleryStats(key), galleryPetCount(this.db, scope)]);
    if (held.pets !== expected) {
      await engine.galleryDrop(key);
      return reject(`holds ${held.pets} pets, the database ${expected}`);
    }
    this.snapshotStates.set(key, snapshotState(savedAt, held.pets));
    logInfo("gallery-restored", { gallery: key, pets: held.pets, ms: Date.now() - started });
    return true;
  }

  /**
   * Saves the scope's gallery in the background when it has no snapshot yet, when many of its pets changed since the
   * last one, or when changes were applied to a snapshot a day old. Saved with this account's cursor: every change
   * up to it is in the gallery (shards may hold later ones too, which a restore applies again).
   */
  private saveWhenDue(scope: GalleryScope, account: AccountGalleries): void {
    const snapshots = this.snapshots;
    if (!snapshots) return;
    const key = galleryKey(scope);
    const state = this.snapshotStates.get(key) ?? snapshotState();
    this.snapshotStates.set(key, state);
    const due =
      state.savedAt === 0 ||
      state.changed >= Math.max(SNAPSHOT_AFTER_CHANGED_PETS, SNAPSHOT_AFTER_CHANGED_FRACTION * state.pets) ||
      (state.changed > 0 && Date.now() - state.savedAt > SNAPSHOT_REFRESH_MS);
    if (!due || state.saving || Date.now() - state.failedAt < SNAPSHOT_RETRY_MS) return;
    state.saving = true;
    const saving = this.save(scope, account.cursor, snapshots, state)
      .catch((error: unknown) => {
        // A gallery that changed while it was saved is saved again at the next search, a few times in a row.
        // By name: the engine door may be another bundle's copy (lib/engine), as for GalleryNotLoadedError.
        const overtaken = error instanceof Error && error.name === SnapshotChangedError.errorName;
        state.overtaken = overtaken ? state.overtaken + 1 : 0;
        if (!overtaken || state.overtaken >= SNAPSHOT_CHANGED_TRIES) state.failedAt = Date.now();
        if (overtaken) logInfo("gallery-snapshot-overtaken", { gallery: key, tries: state.overtaken });
        else logError("gallery-snapshot-failed", error, { gallery: key });
      })
      .finally(() => {
        state.saving = false;
        this.saving.delete(saving);
      });
    this.saving.add(saving);
  }

  /** Resolves once the snapshots being saved now are written (or failed). */
  async snapshotsSaved(): Promise<void> {
    await Promise.all([...this.saving]);
  }

  private async save(scope: GalleryScope, cursor: bigint, snapshots: GallerySnapshots, state: SnapshotState): Promise<void> {
    const started = Date.now();
    const key = galleryKey(scope);
    const engine = this.engine;
    const changedBefore = state.changed;
    const change = cursor > 0n ? await this.db.galleryChange.findUnique({ where: { id: cursor }, select: { createdAt: true } }) : null;
    const shards = await engine.engineThreads();
    const { generation, paths } = await snapshots.prepare(key, shards);
    try {
      const saved = await engine.gallerySave(key, paths);
      await snapshots.publish({
        gallery: key,
        engineVersion: ENGINE_VERSION,
        shards,
        generation,
        cursor: cursor.toString(),
        cursorAt: change?.createdAt.toISOString() ?? null,
        savedAt: new Date(started).toISOString(),
        pets: saved.pets,
        bytes: saved.bytes,
      });
      state.savedAt = started;
      state.overtaken = 0;
      state.pets = saved.pets;
      state.changed -= changedBefore;
      logInfo("gallery-saved", { gallery: key, pets: saved.pets, bytes: saved.bytes, ms: Date.now() - started });
    } catch (error) {
      await snapshots.discard(paths);
      throw error;
    }
  }
}

// One manager per process (the web process in the embedded mode, each `npm run worker`).
export function getGalleryManager(db: Db): GalleryManager {
  return processWide("galleries", () => new GalleryManager(db, engineDoor, new GallerySnapshots(gallerySnapshotDir(readEnv().dataDir))));
}
