import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { OperationName, ResultMessage, TaskMessage, WorkerOperations } from "./worker";

type Result<K extends OperationName> = Awaited<ReturnType<WorkerOperations[K]>>;

export class EngineTaskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EngineTaskError";
  }
}

interface PendingTask {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, PendingTask>;
  /** Fixed position in the pool: sticky tasks for a key always go to the same slot. */
  slot: number;
}

/** No engine operation takes more than a few seconds; one that does is stuck and its worker is replaced. */
const TASK_TIMEOUT_MS = 120_000;

function workerEntryPath(): string {
  return process.env.ENGINE_WORKER_ENTRY ?? path.join(process.cwd(), "lib", "biometrics", "worker-entry.mjs");
}

/** FNV-1a: a stable slot for a sticky key. */
function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * Worker threads for image decoding, extraction and matching, so the web server's event loop never runs
 * them. Tasks go to the least-loaded worker; a crashed or stuck worker fails its tasks and is replaced.
 * Sticky tasks (`runSticky`) for one key always reach the same worker, which may hold state for that key
 * (a 1:N gallery); a replaced worker starts empty, and `incarnation` tells callers it changed.
 */
export class EnginePool {
  private readonly slots: (PoolWorker | undefined)[];
  private nextId = 1;
  private spawned = 0;

  constructor(readonly size: number = Number(process.env.ENGINE_WORKERS) || os.availableParallelism()) {
    this.slots = new Array<PoolWorker | undefined>(size).fill(undefined);
  }

  /** How many workers were ever started: changes whenever one is replaced (its sticky state is gone). */
  get incarnation(): number {
    return this.spawned;
  }

  run<K extends OperationName>(op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    return this.post(this.leastLoaded(), op, args);
  }

  /** Runs on the worker that owns `key`, so that state the worker keeps for the key is there. */
  runSticky<K extends OperationName>(key: string, op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    const slot = hashKey(key) % this.size;
    return this.post(this.slots[slot] ?? this.spawn(slot), op, args);
  }

  private post<K extends OperationName>(target: PoolWorker, op: K, args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    const id = this.nextId++;
    return new Promise<Result<K>>((resolve, reject) => {
      const timer = setTimeout(() => this.replace(target, new EngineTaskError(`engine task ${op} timed out`)), TASK_TIMEOUT_MS);
      target.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      target.worker.ref();
      target.worker.postMessage({ id, op, args } satisfies TaskMessage);
    });
  }

  async shutdown(): Promise<void> {
    const workers = this.slots.filter((w): w is PoolWorker => w !== undefined);
    this.slots.fill(undefined);
    await Promise.all(workers.map((w) => this.failAll(w, new EngineTaskError("engine shut down")).worker.terminate()));
  }

  private leastLoaded(): PoolWorker {
    const live = this.slots.filter((w): w is PoolWorker => w !== undefined);
    const idle = live.find((w) => w.pending.size === 0);
    if (idle) return idle;
    const empty = this.slots.indexOf(undefined);
    if (empty >= 0) return this.spawn(empty);
    return live.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private spawn(slot: number): PoolWorker {
    this.spawned++;
    const poolWorker: PoolWorker = { worker: new Worker(workerEntryPath()), pending: new Map(), slot };
    const { worker, pending } = poolWorker;
    worker.unref();
    worker.on("message", (message: ResultMessage) => {
      const task = pending.get(message.id);
      if (!task) return;
      pending.delete(message.id);
      clearTimeout(task.timer);
      if (pending.size === 0) worker.unref();
      if ("error" in message) task.reject(new EngineTaskError(`${message.error.name}: ${message.error.message}`));
      else task.resolve(message.result);
    });
    worker.on("error", (error) => this.replace(poolWorker, new EngineTaskError(`engine worker crashed: ${error.message}`)));
    worker.on("exit", (code) => {
      if (this.slots[slot] === poolWorker) this.replace(poolWorker, new EngineTaskError(`engine worker exited with code ${code}`));
    });
    this.slots[slot] = poolWorker;
    return poolWorker;
  }

  private failAll(poolWorker: PoolWorker, error: Error): PoolWorker {
    for (const task of poolWorker.pending.values()) {
      clearTimeout(task.timer);
      task.reject(error);
    }
    poolWorker.pending.clear();
    return poolWorker;
  }

  private replace(poolWorker: PoolWorker, error: Error): void {
    if (this.slots[poolWorker.slot] === poolWorker) this.slots[poolWorker.slot] = undefined;
    this.failAll(poolWorker, error);
    void poolWorker.worker.terminate();
  }
}
