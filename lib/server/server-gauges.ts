import type { Db } from "@/lib/db";
import { engineLoad, galleryTotals } from "@/lib/engine";
import { registerGauge } from "@/lib/metrics";

/** The gauges only the server can read, registered once at start-up (read when /metrics is scraped). */
export function registerServerGauges(db: Db): void {
  registerGauge("rhinarium_jobs_pending", "Jobs waiting to run or running (PENDING in the database, every process's), by kind.", ["kind"], async () => {
    const rows = await db.job.groupBy({ by: ["kind"], where: { status: "PENDING" }, _count: { _all: true } });
    return rows.map((row) => ({ labels: { kind: row.kind }, value: row._count._all }));
  });
  registerGauge("rhinarium_engine_tasks", "Engine tasks in this process's worker-thread pool, running or waiting for a thread.", ["state"], async () => {
    const load = engineLoad();
    return [
      { labels: { state: "running" }, value: load.running },
      { labels: { state: "queued" }, value: load.queued },
    ];
  });
  registerGauge("rhinarium_gallery_pets", "Pets in the 1:N galleries this process holds loaded, over all of them.", [], async () => [
    { labels: {}, value: (await galleryTotals()).pets },
  ]);
  registerGauge("rhinarium_galleries_loaded", "1:N galleries (account, search pool and species) this process holds loaded.", [], async () => [
    { labels: {}, value: (await galleryTotals()).galleries },
  ]);
  registerGauge("rhinarium_engine_workers", "Worker threads of this process's engine pool (0 until its first task).", [], async () => [
    { labels: {}, value: engineLoad().workers },
  ]);
}
