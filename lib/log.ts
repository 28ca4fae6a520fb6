// One JSON line per event on stderr: enough for `journalctl`/`docker logs` and easy to grep.
export function logError(event: string, error: unknown, fields: Record<string, unknown> = {}): void {
  const err = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
  console.error(JSON.stringify({ level: "error", time: new Date().toISOString(), event, ...fields, error: err }));
}

export function logInfo(event: string, fields: Record<string, unknown> = {}): void {
  if (process.env.LOG_LEVEL === "silent" || process.env.LOG_LEVEL === "error") return;
  console.log(JSON.stringify({ level: "info", time: new Date().toISOString(), event, ...fields }));
}
