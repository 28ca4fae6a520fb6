// Next calls register() once per server process, before it serves: the database is migrated and the
// job queue is running before the first request.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServer } = await import("@/lib/server/start");
  try {
    await startServer();
  } catch (error) {
    // Next would go on listening with every request failing; a server that cannot own its database
    // (another server holds DATA_DIR, PostgreSQL unreachable, a migration failed) must stop instead.
    console.error("rhinarium: start-up failed:", error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
