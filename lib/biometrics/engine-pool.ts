import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { OperationName, ResultMessage, TaskMessage, WorkerOperations } from "./worker";

type Result<K extends OperationName> = Awaited<ReturnType<WorkerOperations[K]>>;

export class EngineTaskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EngineTaskError";
  }
}

interface Task {
  id: number;
  op: OperationName;
  args: unknown[];
  /** Buffers moved to the worker with the task rather than copied (unusable in this thread afterwards). */
  transfer: ArrayBuffer[];
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  /** The one task this worker runs now, and the timer that replaces the worker if it runs too long. */
  running: { task: Task; timer: NodeJS.Timeout } | null;
  /** Fixed position in the pool: sticky tasks for a key always go to the same slot. */
  slot: number;
}

/** No engine operation runs more than a few seconds; one that does is stuck and its worker is replaced. */
const TASK_TIMEOUT_MS = 120_000;

/**
 * The file each worker thread runs: the same engine as the thread that starts it.
 * - A build's server (Next bundles this module) runs the worker compiled with that build
 *   (`scripts/build-engine.mjs`: `<dist dir>/engine/worker.mjs`); a missing one fails every task.
 * - A process that runs the engine from its TypeScript sources (tsx: the lab's scripts) runs the worker
 *   from the same sources through tsx (`worker-entry.mjs`). The job worker process and the ops CLI are
 *   compiled at build time with their own copy of the compiled worker (`scripts/build-processes.mjs`).
 * - `ENGINE_WORKER_ENTRY` names another compiled worker: the test suite compiles one per run
 *   (`vitest.global-setup.ts`), so tests run the compiled form the server runs.
 */
export function workerEntryPath(): string {
  if (process.env.ENGINE_WORKER_ENTRY) return process.env.ENGINE_WORKER_ENTRY;
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".ts")) return path.join(/* turbopackIgnore: true */ path.dirname(here), "worker-entry.mjs");
  const built = path.join(/* turbopackIgnore: true */ process.cwd(), process.env.NEXT_DIST_DIR || ".next", "engine", "worker.mjs");
  if (!fs.existsSync(built)) throw new EngineTaskError(`the engine is not compiled (no ${built}): run npm run build`);
  return built;
}

/** FNV-1a: spreads keys (gallery keys, pet ids) over the pool's slots. */
/**
 * A copy of `bytes` in shared memory: posted to the pool's threads, it is read where it lies instead of being copied by
 * the sender and again by each receiver (a 1:N search posts its probe to every task, a deep pass ~22 MB of light
 * templates). Never written after: every reader only reads.
 */
export function inSharedMemory(bytes: Uint8Array): Uint8Array {
  const shared = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  shared.set(bytes);
  return shared;
}

export function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * Worker threads for image decoding, extraction and matching, so the web server's event loop never runs
 * them. Each worker runs one task at a time; tasks wait in the pool's queue (in order) until a worker is
 * free, so a burst of uploads queues instead of timing out, and the stuck-task timeout counts running
 * time only. A crashed or stuck worker fails its task and is replaced.
 * Sticky tasks (`runSticky`) for one key always run on the same slot's worker, which may hold state for
 * that key (a 1:N gallery); a replaced worker starts empty.
 */
export class EnginePool {
  private readonly slots: (PoolWorker | undefined)[];
  private readonly shared: Task[] = [];
  private readonly sticky: Task[][];
  private nextId = 1;

  constructor(readonly size: number = Number(process.env.ENGINE_WORKERS) || os.availableParallelism()) {
    this.slots = new Array<PoolWorker | undefined>(size).fill(undefined);
    this.sticky = Array.from({ length: size }, () => []);
  }

  run<K extends OperationName>(op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    return this.enqueue(this.shared, op, args, []);
  }

  /** Runs on the worker that owns `key`, so that state the worker keeps for the key is there. */
  runSticky<K extends OperationName>(key: string, op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    return this.runOnSlot(hashKey(key) % this.size, op, ...args);
  }

  /** Runs on slot `slot`'s worker (0 ≤ slot < size): state kept per slot, as a gallery's shards. */
  runOnSlot<K extends OperationName>(slot: number, op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    return this.enqueue(this.sticky[slot], op, args, []);
  }

  /** runOnSlot, moving `transfer` to the worker instead of copying it: those buffers are unusable here afterwards. */
  transferToSlot<K extends OperationName>(slot: number, transfer: ArrayBuffer[], op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    return this.enqueue(this.sticky[slot], op, args, transfer);
  }

  /** Tasks a worker is running now. */
  get running(): number {
    return this.slots.filter((w) => w?.running).length;
  }

  /** Tasks waiting for a worker (not yet running). */
  get queued(): number {
    return this.shared.length + this.sticky.reduce((sum, queue) => sum + queue.length, 0);
  }

  async shutdown(): Promise<void> {
    const error = new EngineTaskError("engine shut down");
    for (const task of [...this.shared.splice(0), ...this.sticky.flatMap((queue) => queue.splice(0))]) task.reject(error);
    const workers = this.slots.filter((w): w is PoolWorker => w !== undefined);
    this.slots.fill(undefined);
    await Promise.all(workers.map((w) => this.failRunning(w, error).worker.terminate()));
  }

  private enqueue<K extends OperationName>(queue: Task[], op: K, args: unknown[], transfer: ArrayBuffer[]): Promise<Result<K>> {
    return new Promise<Result<K>>((resolve, reject) => {
      queue.push({ id: this.nextId++, op, args, transfer, resolve: resolve as (value: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Gives every idle slot its next task: its own sticky tasks first, then the shared queue. */
  private dispatch(): void {
    for (let slot = 0; slot < this.size; slot++) {
      const current = this.slots[slot];
      if (current?.running) continue;
      const task = this.sticky[slot].shift() ?? this.shared.shift();
      if (!task) continue;
      let target: PoolWorker;
      try {
        target = current ?? this.spawn(slot);
      } catch (error) {
        task.reject(error instanceof Error ? error : new EngineTaskError(String(error)));
        continue;
      }
      this.start(target, task);
    }
  }

  private start(target: PoolWorker, task: Task): void {
    const timer = setTimeout(() => this.replace(target, new EngineTaskError(`engine task ${task.op} timed out`)), TASK_TIMEOUT_MS);
    target.running = { task, timer };
    target.worker.ref();
    target.worker.postMessage({ id: task.id, op: task.op, args: task.args } satisfies TaskMessage, task.transfer);
  }

  private spawn(slot: number): PoolWorker {
    // Built through Reflect: Turbopack, bundling this module into a build's server, would otherwise take
    // `new Worker(<computed path>)` for a worker entry to bundle from anywhere in the project. The worker
    // is compiled on its own (scripts/build-engine.mjs).
    const worker = Reflect.construct(Worker, [workerEntryPath()]) as Worker;
    const poolWorker: PoolWorker = { worker, running: null, slot };
    worker.unref();
    worker.on("message", (message: ResultMessage) => {
      const running = poolWorker.running;
      if (!running || running.task.id !== message.id) return;
      clearTimeout(running.timer);
      poolWorker.running = null;
      worker.unref();
      if ("error" in message) running.task.reject(new EngineTaskError(`${message.error.name}: ${message.error.message}`));
      else running.task.resolve(message.result);
      this.dispatch();
    });
    worker.on("error", (error) => this.replace(poolWorker, new EngineTaskError(`engine worker crashed: ${error.message}`)));
    worker.on("exit", (code) => {
      if (this.slots[slot] === poolWorker) this.replace(poolWorker, new EngineTaskError(`engine worker exited with code ${code}`));
    });
    this.slots[slot] = poolWorker;
    return poolWorker;
  }

  private failRunning(poolWorker: PoolWorker, error: Error): PoolWorker {
    if (poolWorker.running) {
      clearTimeout(poolWorker.running.timer);
      poolWorker.running.task.reject(error);
      poolWorker.running = null;
    }
    return poolWorker;
  }

  private replace(poolWorker: PoolWorker, error: Error): void {
    if (this.slots[poolWorker.slot] === poolWorker) this.slots[poolWorker.slot] = undefined;
    this.failRunning(poolWorker, error);
    void poolWorker.worker.terminate();
    // Waiting tasks go on, on a fresh worker.
    this.dispatch();
  }
}
