// Next calls register() once per server process, before it serves: the database is migrated and the
// job queue is running before the first request.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServerOrExit } = await import("@/lib/server/start");
  await startServerOrExit();
}
