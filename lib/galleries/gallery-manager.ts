import type { Db } from "@/lib/db/connect";
import * as engineDoor from "@/lib/engine";
import { packPets, type Engine, type IdentificationOutcome } from "@/lib/engine";
import { enrolledLightTemplatesByPet, enrolledSearchKeysByPet, enrolledTemplatesByPet } from "@/lib/jobs/templates";
import { logError, logInfo } from "@/lib/log";
import { galleryBatchAfter, type GalleryScope } from "./gallery-rows";
import { processWide } from "@/lib/process-state";

/** The engine's gallery calls (lib/engine): galleries live in its worker threads. */
export type GalleryEngine = Pick<Engine, "galleryUpsertPets" | "galleryDrop" | "galleryStats" | "identifyInGallery">;

export type { GalleryScope };

export function galleryKey(scope: GalleryScope): string {
  return `${scope.accountId}/${scope.poolId ?? "*"}/${scope.species}`;
}

/** Pets read from the database per batch when a gallery is loaded (their search keys, not whole templates). */
const LOAD_BATCH_PETS = 1000;
/** Gallery changes older than this are deleted; a process that has not synced for half of it reloads. */
const CHANGE_RETENTION_MS = 7 * 24 * 3600_000;

interface AccountGalleries {
  /** Id of the last GalleryChange applied to every gallery of the account in this process. */
  cursor: bigint;
  syncedAt: number;
  scopes: Map<string, GalleryScope>;
}

/**
 * The per-process set of 1:N galleries (one per account, search pool and species), held by the
 * engine's worker threads. A gallery is loaded from the database the first time it is searched,
 * streamed in batches; before every identification the account's GalleryChange rows after this
 * process's cursor are applied, so a pet enrolled, deleted or moved by any process (another worker,
 * the web process, the ops CLI) is searched, or not, by the next identification everywhere.
 */
export class GalleryManager {
  private readonly accounts = new Map<string, AccountGalleries>();
  /** One sync or load at a time per account; identifications themselves run concurrently. */
  private readonly accountLocks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly engine: GalleryEngine = engineDoor,
  ) {}

  /** 1:N in the scope's gallery; with the probe images' JPEGs (`probeImages[p]` for `probe[p]`), turned probes are found too. */
  async identify(scope: GalleryScope, probe: Uint8Array[], probeImages?: Uint8Array[]): Promise<IdentificationOutcome> {
    const engine = this.engine;
    const search = async () => {
      await this.prepare(scope);
      const loader = (read: typeof enrolledTemplatesByPet) => async (petIds: string[]) =>
        [...(await read(this.db, scope.accountId, petIds))].map(([petId, templates]) => ({ petId, templates }));
      return engine.identifyInGallery(galleryKey(scope), probe, loader(enrolledTemplatesByPet), loader(enrolledLightTemplatesByPet), probeImages);
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
      await this.load(scope);
      account.scopes.set(key, scope);
    }
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

  private async load(scope: GalleryScope): Promise<void> {
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
        pets += current.pets.petIds.length;
        batch = await readBatch(current.last);
      }
    } finally {
      await adding.catch(() => undefined);
    }
    await adding;
    // A gallery with no pets yet is a loaded one (every shard created), not one loaded again at each search.
    if (pets === 0) await engine.galleryUpsertPets(key, packPets([]));
    await this.db.galleryChange.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - CHANGE_RETENTION_MS) } } });
    logInfo("gallery-loaded", { gallery: key, pets, ms: Date.now() - started });
  }

  /** Each changed pet is put in, updated in, or taken out of every gallery of the account it (no longer) belongs to. */
  private async applyChanges(accountId: string, account: AccountGalleries): Promise<void> {
    for (;;) {
      const changes = await this.db.galleryChange.findMany({
        where: { accountId, id: { gt: account.cursor } },
        orderBy: { id: "asc" },
        select: { id: true, petId: true },
        take: 5000,
      });
      if (changes.length === 0) break;
      const petIds = [...new Set(changes.map((c) => c.petId))];
      const [pets, templates] = await Promise.all([
        this.db.pet.findMany({ where: { accountId, id: { in: petIds } }, select: { id: true, species: true, poolId: true } }),
        enrolledSearchKeysByPet(this.db, accountId, petIds),
      ]);
      const petById = new Map(pets.map((p) => [p.id, p]));
      const engine = this.engine;
      const updates = [...account.scopes].map(([key, scope]) =>
        engine.galleryUpsertPets(
          key,
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
      account.cursor = changes[changes.length - 1].id;
    }
    account.syncedAt = Date.now();
  }
}

// One manager per process (the web process in the embedded mode, each `npm run worker`).
export function getGalleryManager(db: Db): GalleryManager {
  return processWide("galleries", () => new GalleryManager(db));
}
