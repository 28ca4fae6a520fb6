import type { IncomingMessage } from "node:http";

/**
 * After a body was refused, the rest of it is read and thrown away, and the answer ends (and a
 * `connection: close` request's socket closes) only once it has all arrived: closing at once would
 * cut the client's upload with EPIPE, often before it read the answer. Beyond this much the
 * connection is closed anyway: nobody needs to send more (the server's request timeout bounds a slow one).
 */
export const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Once the answer is known, whatever of the body was not read is discarded, never buffered: the
 * promise settles once it has all arrived (undefined when nothing is left to wait for).
 */
export function discardRest(req: IncomingMessage): Promise<void> | undefined {
  if (req.complete || req.destroyed) return undefined;
  let discarded = 0;
  req.removeAllListeners("data");
  req.on("data", (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > MAX_DISCARDED_BODY_BYTES) req.socket.destroy();
  });
  const received = new Promise<void>((resolve) => {
    req.once("end", resolve);
    req.once("close", resolve);
  });
  req.resume();
  return received;
}
