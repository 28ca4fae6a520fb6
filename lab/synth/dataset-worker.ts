// Worker-thread entry: renders an interleaved share of the subjects of a dataset.
import sharp from "sharp";
import { parentPort, workerData } from "node:worker_threads";
import { generateSubject, type WorkerTask } from "./dataset";

// Each worker is one core's worth of work; libvips threads would only contend with the others.
sharp.concurrency(1);
sharp.cache(false);

const task = workerData as WorkerTask;
for (let s = task.offset; s < task.job.subjects; s += task.stride) {
  await generateSubject(task.job, s);
  parentPort?.postMessage("subject-done");
}
