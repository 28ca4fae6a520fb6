// The worker thread of a process that runs the engine from its TypeScript sources (tsx: the lab's scripts and
// the test suite's own processes): tsx compiles worker.ts on load, so the thread runs the same
// sources as the thread that started it (engine-pool.ts, workerEntryPath). A build's server, job worker
// process and ops CLI run the worker compiled at build time instead. `workerData.module` lets the evaluation run its own worker
// module through the same entry.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData?.module ?? "./worker.ts");
