import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type Logger } from "pino";

// One JSON line per event (pino): info on stdout, errors on stderr, enough for `journalctl`/`docker logs` and easy to
// grep. Every line carries the request id of the request it was written for (see withRequestId), and fields that could
// hold a secret are redacted by name wherever they sit, so a key or a password never reaches a log.

/** The levels LOG_LEVEL may name, quietest first. */
export const LOG_LEVELS = ["silent", "error", "info"] as const;
type Level = (typeof LOG_LEVELS)[number];

/** Field names whose values never appear in a log line, at the top level or one object down. */
export const REDACTED_FIELDS = ["authorization", "cookie", "password", "apiKey", "token", "secret"] as const;

const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `fn` so that every line logged during it, in any callback it starts, names `requestId`. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestContext.run({ requestId }, fn);
}

function levelOf(value: string | undefined): Level {
  return (LOG_LEVELS as readonly string[]).includes(value ?? "") ? (value as Level) : "info";
}

function createLogger(level: Level, write: (line: string) => unknown): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_FIELDS.flatMap((name) => [name, `*.${name}`]), censor: "[redacted]" },
      mixin: () => {
        const context = requestContext.getStore();
        return context ? { requestId: context.requestId } : {};
      },
    },
    // Written through the process streams (not a file descriptor of pino's own) so lines keep their order with
    // everything else the process prints, and the last line of a command's stdout stays its JSON result.
    { write },
  );
}

let loggers: { level: string | undefined; info: Logger; error: Logger } | undefined;
/** LOG_LEVEL (silent, error, info; default info) is read when it changes, so tests and commands may set it late. */
function current() {
  const level = process.env.LOG_LEVEL;
  if (!loggers || loggers.level !== level) {
    loggers = {
      level,
      info: createLogger(levelOf(level), (line) => process.stdout.write(line)),
      error: createLogger(levelOf(level), (line) => process.stderr.write(line)),
    };
  }
  return loggers;
}

function errorFields(error: unknown): { message: string; stack?: string } {
  return error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
}

export function logError(event: string, error: unknown, fields: Record<string, unknown> = {}): void {
  current().error.error({ event, ...fields, error: errorFields(error) });
}

export function logInfo(event: string, fields: Record<string, unknown> = {}): void {
  current().info.info({ event, ...fields });
}
