import fs from "node:fs";
import os from "node:os";
import { parentPort } from "node:worker_threads";
import sharp from "sharp";
import * as gallery from "./gallery";
import * as operations from "./operations";

export const WORKER_OPERATIONS = {
  analyseImage: operations.analyseImage,
  verifyPet: operations.verifyPet,
  scoreImagePair: operations.scoreImagePair,
  matchEnrolledImages: operations.matchEnrolledImages,
  matchTurnedRows: operations.matchTurnedRows,
  rerankCandidates: operations.rerankCandidates,
  turnProbeImage: operations.turnProbeImage,
  // Stateful: each worker holds one shard of a gallery, so these run through EnginePool.runOnSlot.
  galleryUpsertPets: gallery.galleryUpsertPets,
  galleryRemovePet: gallery.galleryRemovePet,
  galleryDrop: gallery.galleryDrop,
  gallerySaveSlice: gallery.gallerySaveSlice,
  galleryRestore: gallery.galleryRestore,
  galleryStats: gallery.galleryStats,
  galleryTotals: gallery.galleryTotals,
  galleryShortlist: gallery.galleryShortlist,
  galleryProbeLookups: gallery.galleryProbeLookups,
};
export type WorkerOperations = typeof WORKER_OPERATIONS;
export type OperationName = keyof WorkerOperations;

export interface TaskMessage {
  id: number;
  op: OperationName;
  args: unknown[];
}

export type ResultMessage = { id: number; result: unknown } | { id: number; error: { name: string; message: string } };

// Each worker is one of a pool sized to the cores; libvips threads on top would oversubscribe them.
sharp.concurrency(1);

/**
 * The nice value of an engine thread. The pool is sized to the cores, so while it is busy the web
 * server's main thread (nice 0) competes with it for a core; niced, the engine yields the CPU to the
 * main thread whenever it has a request to answer, and takes every idle cycle otherwise.
 */
export const ENGINE_THREAD_NICE = 10;

/** The nice value of an engine thread in a process running at `processNice`: that much lower in priority, at most 19. */
export function engineThreadNice(processNice: number): number {
  return Math.min(19, processNice + ENGINE_THREAD_NICE);
}

/** Lowers this thread's priority (Linux: the nice value is per thread; setpriority takes its id). */
function yieldCpuToMainThread(): void {
  try {
    const threadId = Number(fs.readlinkSync("/proc/thread-self").split("/").pop());
    // Relative to the process's own nice value (a thread starts with it), so a server started under `nice` keeps its
    // engine below its main thread rather than raising the engine to an absolute 10.
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, engineThreadNice(os.getPriority(threadId)));
  } catch {
    // Not Linux, or not permitted: the engine runs at the process's priority.
  }
}
if (parentPort) yieldCpuToMainThread();

parentPort?.on("message", async (task: TaskMessage) => {
  try {
    const operation = WORKER_OPERATIONS[task.op] as (...args: unknown[]) => unknown;
    const result = await operation(...task.args);
    parentPort!.postMessage({ id: task.id, result } satisfies ResultMessage);
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    parentPort!.postMessage({ id: task.id, error: { name, message } } satisfies ResultMessage);
  }
});
