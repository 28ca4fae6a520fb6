import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { EvalRequest } from "./eval-worker";

/** A fixed group of evaluation workers: broadcast state to all, or spread independent requests over them. */
export class EvalWorkers {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 1;

  constructor(size = os.availableParallelism()) {
    const entry = path.join(import.meta.dirname, "..", "..", "lib", "biometrics", "worker-entry.mjs");
    const module = path.join(import.meta.dirname, "eval-worker.ts");
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(entry, { workerData: { module } });
      worker.on("message", (message: { id: number; result?: unknown; error?: string }) => {
        const task = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error !== undefined) task?.reject(new Error(message.error));
        else task?.resolve(message.result);
      });
      worker.on("error", (error) => {
        for (const task of this.pending.values()) task.reject(error);
        this.pending.clear();
      });
      return worker;
    });
  }

  get size(): number {
    return this.workers.length;
  }

  private send<T>(worker: Worker, request: EvalRequest): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, request });
    });
  }

  broadcast(request: EvalRequest): Promise<unknown[]> {
    return Promise.all(this.workers.map((worker) => this.send(worker, request)));
  }

  /** Runs the requests with at most one in flight per worker, results in request order. */
  async map<T>(requests: EvalRequest[], onProgress?: (done: number) => void): Promise<T[]> {
    const results: T[] = new Array(requests.length);
    let next = 0;
    let done = 0;
    await Promise.all(
      this.workers.map(async (worker) => {
        while (next < requests.length) {
          const index = next++;
          results[index] = await this.send<T>(worker, requests[index]);
          onProgress?.(++done);
        }
      }),
    );
    return results;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
