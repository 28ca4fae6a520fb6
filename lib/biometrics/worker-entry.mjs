// Worker threads run TypeScript sources directly: tsx compiles them on load, so the same files serve the
// Next server, the CLI scripts and the tests without a separate build step. `workerData.module` lets the
// evaluation run its own worker module through the same entry.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData?.module ?? "./worker.ts");
