#!/usr/bin/env node
// `npm run worker` — a job worker process (BullMQ on REDIS_URL, PostgreSQL on DATABASE_URL); see
// lib/jobs/worker-process.ts. It runs compiled, from the process build of the current sources
// (scripts/build-processes.mjs: compiled first when there is none).
import { importProcessEntry } from "./build-processes.mjs";

const { runWorkerProcess } = await importProcessEntry("worker");
await runWorkerProcess();
