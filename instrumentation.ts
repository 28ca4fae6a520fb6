// Next calls register() once per server process, before it serves: the database is migrated and the
// job queue is running before the first request. The API is then handed to the Node front that
// serves /v2 (scripts/server.mjs, lib/api/node-front.ts) from this same module graph.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServerOrExit } = await import("@/lib/server/start");
  await startServerOrExit();
  const { exposeApiFront } = await import("@/lib/api/node-front");
  exposeApiFront();
}
