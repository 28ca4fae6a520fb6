import type pg from "pg";
import type { Duplex } from "node:stream";
import type { Prisma } from "@/lib/generated/prisma/client";
import { binaryRequest, ResponseDecoder, type BinaryRow } from "./binary-rows";

/** The parts of node-postgres's client this reader uses: its connection's socket (TCP or TLS), after start-up. */
interface PooledClient {
  connection: { stream: Duplex };
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * One statement's rows from PostgreSQL in its binary format (BinaryRows.query; decision 0051). node-postgres turns
 * every field into a string whatever the format asked, so the statement is written on the socket of a connection
 * taken from the pool, and the response read from it by the binary decoder: the driver's own reader is detached from
 * the socket meanwhile and given it back after ReadyForQuery. The connection is idle and checked out, so nothing else
 * is sent or awaited on it. A refused statement leaves it ready (the server answers Sync with ReadyForQuery) and is
 * thrown; a socket that fails, closes, answers something undecodable or nothing within `timeoutMs` destroys the
 * connection.
 */
export async function postgresBinaryRows(pool: pg.Pool, sql: Prisma.Sql, timeoutMs: number): Promise<BinaryRow[]> {
  const request = binaryRequest(sql);
  const client = await pool.connect();
  const decoder = new ResponseDecoder();
  let failure: Error | undefined;
  try {
    await exchange(client as unknown as PooledClient, request, decoder, timeoutMs);
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  } finally {
    // A failed connection is destroyed rather than returned to the pool.
    client.release(failure);
  }
  if (failure) throw failure;
  return decoder.finish();
}

function exchange(client: PooledClient, request: Uint8Array, decoder: ResponseDecoder, timeoutMs: number): Promise<void> {
  const stream = client.connection.stream;
  const driverReaders = stream.listeners("data") as ((chunk: Buffer) => void)[];
  stream.removeAllListeners("data");
  return new Promise<void>((resolve, reject) => {
    let ended = false;
    const end = (error?: Error) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      stream.off("data", onData);
      stream.off("close", onClose);
      client.off("error", onError);
      if (error) {
        // What the socket still holds belongs to this exchange, not to the driver: the connection goes.
        stream.destroy();
        reject(error);
      } else {
        for (const reader of driverReaders) stream.on("data", reader);
        resolve();
      }
    };
    const onData = (chunk: Buffer) => {
      decoder.push(chunk);
      if (decoder.malformed) end(new Error("binary query: PostgreSQL's response could not be read"));
      else if (decoder.ready) end();
    };
    const onClose = () => end(new Error("binary query: PostgreSQL closed the connection"));
    // The driver reports the socket's errors on its client; a checked-out client has no other listener.
    const onError = (error: Error) => end(error);
    const timer = setTimeout(() => end(new Error(`binary query: PostgreSQL did not answer within ${timeoutMs} ms`)), timeoutMs);
    stream.on("data", onData);
    stream.on("close", onClose);
    client.on("error", onError);
    stream.write(request);
  });
}
