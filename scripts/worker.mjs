#!/usr/bin/env node
// `npm run worker` — a job worker process (BullMQ on REDIS_URL, PostgreSQL on DATABASE_URL); see
// lib/jobs/worker-process.ts. The logic is TypeScript shared with the server; tsx loads it.
import { register } from "tsx/esm/api";

register();
const { runWorkerProcess } = await import("../lib/jobs/worker-process.ts");
await runWorkerProcess();
