// Whether an error means "the database cannot be reached right now" (refused, reset, timed out,
// connection closed) rather than a bug: the API answers those 503 with Retry-After, and the
// contract's client retries with backoff until the database is back.

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
// Prisma's connection errors (P1001 unreachable, P1002 timed out, P1008 operation timed out,
// P1017 server closed the connection, P2024 timed out fetching a pool connection).
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
// Driver adapter error kinds for the same conditions, and PostgreSQL's "server shutting down" states.
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TransactionAlreadyClosed"]);
const PG_SQLSTATES = new Set(["57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"]);
const MESSAGES =
  /connection terminated|connection timeout|timeout exceeded when trying to connect|can't reach database|server has closed the connection|connection refused|not queryable|client has encountered a connection error|econnrefused|econnreset/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const e = current as { code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown };
    if (typeof e.code === "string" && (NETWORK_CODES.has(e.code) || PRISMA_CODES.has(e.code) || PG_SQLSTATES.has(e.code))) return true;
    if (typeof e.originalCode === "string" && PG_SQLSTATES.has(e.originalCode)) return true;
    if (typeof e.kind === "string" && ADAPTER_KINDS.has(e.kind)) return true;
    if (typeof e.message === "string" && MESSAGES.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}
