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
}

/** No engine operation takes more than a few seconds; one that does is stuck and its worker is replaced. */
const TASK_TIMEOUT_MS = 120_000;

function workerEntryPath(): string {
  return process.env.ENGINE_WORKER_ENTRY ?? path.join(process.cwd(), "lib", "biometrics", "worker-entry.mjs");
}

/**
 * Worker threads for image decoding, extraction and matching, so the web server's event loop never runs
 * them. Tasks go to the least-loaded worker; a crashed or stuck worker fails its tasks and is replaced.
 */
export class EnginePool {
  private readonly workers: PoolWorker[] = [];
  private nextId = 1;

  constructor(readonly size: number = Number(process.env.ENGINE_WORKERS) || os.availableParallelism()) {}

  run<K extends OperationName>(op: K, ...args: Parameters<WorkerOperations[K]>): Promise<Result<K>> {
    const target = this.leastLoaded();
    const id = this.nextId++;
    return new Promise<Result<K>>((resolve, reject) => {
      const timer = setTimeout(() => this.replace(target, new EngineTaskError(`engine task ${op} timed out`)), TASK_TIMEOUT_MS);
      target.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      target.worker.ref();
      target.worker.postMessage({ id, op, args } satisfies TaskMessage);
    });
  }

  async shutdown(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => this.failAll(w, new EngineTaskError("engine shut down")).worker.terminate()));
  }

  private leastLoaded(): PoolWorker {
    if (this.workers.length < this.size) {
      const idle = this.workers.find((w) => w.pending.size === 0);
      if (idle) return idle;
      return this.spawn();
    }
    return this.workers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private spawn(): PoolWorker {
    const poolWorker: PoolWorker = { worker: new Worker(workerEntryPath()), pending: new Map() };
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
      if (this.workers.includes(poolWorker)) this.replace(poolWorker, new EngineTaskError(`engine worker exited with code ${code}`));
    });
    this.workers.push(poolWorker);
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
    const index = this.workers.indexOf(poolWorker);
    if (index >= 0) this.workers.splice(index, 1);
    this.failAll(poolWorker, error);
    void poolWorker.worker.terminate();
  }
}
