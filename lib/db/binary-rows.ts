import type { PGlite } from "@electric-sql/pglite";
import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "./connect";

/**
 * Rows read in PostgreSQL's binary format over its wire protocol, from either database: a `bytea` value arrives as its
 * bytes. Through the ORM, PGlite would encode it as text in WebAssembly (hex, or base64 where the query asks `encode`)
 * and this process decode it again: for a gallery load's search keys that was about four times the CPU (decision
 * 0048). PostgreSQL's driver turns every field into a string, base64 text of ~28 KB a pet for a gallery load, so its
 * rows are read on a pooled connection's socket instead (./postgres-binary.ts, decision 0051). The request and the
 * response's decoding are this module's; each database brings its transport (./connect.ts registers it).
 */
/** A JSON column's value, parsed. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type BinaryValue = string | Uint8Array | bigint | number | boolean | null | JsonValue;
export type BinaryRow = Record<string, BinaryValue>;

export interface BinaryRows {
  /**
   * The rows of one statement (parameters as text, `$1`…, as `Prisma.sql` writes them; a date in ISO 8601), run alone,
   * outside any transaction of the caller. Columns decode by type: text → string, bytea → Uint8Array, int8 → bigint,
   * int2 / int4 → number, float4 / float8 → number, bool → boolean, json / jsonb → its value parsed. Another type is
   * an error: cast it in the query. The Uint8Array values are views of their row's buffer (the row's message as it
   * arrived).
   */
  query(sql: Prisma.Sql): Promise<BinaryRow[]>;
}

const readers = new WeakMap<Db, BinaryRows>();

/** Records how `db`'s binary rows are read (lib/db/connect.ts). */
export function registerBinaryRows(db: Db, reader: BinaryRows): void {
  readers.set(db, reader);
}

/** The binary reader of an opened database; null for another client (a transaction's, whose reads must stay in it). */
export function binaryRows(db: Db): BinaryRows | null {
  return readers.get(db) ?? null;
}

/**
 * The rows of a query whose byte columns (`bytesColumns`, each written `bytes(expression)` in the query) come back as
 * Uint8Array: read in binary where the database has a binary reader, else (inside a transaction) in base64, which
 * the ORM's driver decodes as text (decision 0016). Each byte value is a copy of its own.
 */
export async function rowsWithBytes<Row>(db: Db, bytesColumns: readonly (keyof Row & string)[], query: (bytes: (expression: Prisma.Sql) => Prisma.Sql) => Prisma.Sql): Promise<Row[]> {
  const reader = binaryRows(db);
  if (reader) {
    const rows = await reader.query(query((expression) => expression));
    for (const row of rows) for (const column of bytesColumns) if (row[column] instanceof Uint8Array) row[column] = (row[column] as Uint8Array).slice();
    return rows as Row[];
  }
  const rows = await db.$queryRaw<Record<string, unknown>[]>(query((expression) => Prisma.sql`encode(${expression}, 'base64')`));
  for (const row of rows) for (const column of bytesColumns) if (typeof row[column] === "string") row[column] = new Uint8Array(Buffer.from(row[column] as string, "base64"));
  return rows as Row[];
}

/**
 * One statement's messages, sent together: Parse (unnamed, parameter types inferred), Bind (parameters in text,
 * every result column binary), Describe the portal (its columns), Execute (every row), Sync. The response ends with
 * ReadyForQuery (ResponseDecoder.ready).
 */
export function binaryRequest(sql: Prisma.Sql): Uint8Array {
  return Buffer.concat([
    message(0x50, [cString(""), cString(sql.text), int16s([0])]),
    bindMessage(sql.values),
    message(0x44, [Uint8Array.of(0x50), cString("")]),
    message(0x45, [cString(""), int32(0)]),
    message(0x53, []),
  ]);
}

/** One statement's rows from `pglite` in the binary format (BinaryRows.query). */
export async function pgliteBinaryRows(pglite: PGlite, sql: Prisma.Sql): Promise<BinaryRow[]> {
  const request = binaryRequest(sql);
  const decoder = new ResponseDecoder();
  // PGlite's transaction() holds the lock every query of the process (the ORM's included) takes, so nothing runs
  // between these messages; its BEGIN makes the Sync end no transaction but this one.
  // A refused statement throws inside it, so that the transaction rolls back.
  return pglite.transaction(async () => {
    let open = true;
    try {
      await pglite.execProtocolRawStream(request, { syncToFs: false, onRawData: (chunk) => open && decoder.push(chunk) });
    } finally {
      open = false;
    }
    return decoder.finish();
  });
}

const utf8 = new TextEncoder();
const text = new TextDecoder("utf-8", { fatal: true });

function bindMessage(values: unknown[]): Uint8Array {
  const parameters = values.flatMap((value) => {
    if (value === null || value === undefined) return [int32(-1)];
    if (value instanceof Date) {
      const bytes = utf8.encode(value.toISOString());
      return [int32(bytes.length), bytes];
    }
    if (Array.isArray(value)) {
      const bytes = utf8.encode(arrayLiteral(value));
      return [int32(bytes.length), bytes];
    }
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "bigint" && typeof value !== "boolean") {
      throw new TypeError(`binary query: a ${typeof value} parameter is not supported (pass text, a number, a boolean, a date or an array of them)`);
    }
    const bytes = utf8.encode(String(value));
    return [int32(bytes.length), bytes];
  });
  // Unnamed portal and statement; every parameter in text (format 0, the default); every result column binary.
  return message(0x42, [cString(""), cString(""), int16s([0, values.length]), ...parameters, int16s([1, 1])]);
}

/** A one-dimensional array parameter in PostgreSQL's text form: each element quoted, NULL for null. */
function arrayLiteral(values: unknown[]): string {
  const element = (value: unknown) => {
    if (value === null || value === undefined) return "NULL";
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "bigint" && typeof value !== "boolean") {
      throw new TypeError(`binary query: an array of ${typeof value} is not supported`);
    }
    return `"${String(value).replace(/[\\"]/g, "\\$&")}"`;
  };
  return `{${values.map(element).join(",")}}`;
}

interface Column {
  name: string;
  type: number;
}

/**
 * The response's RowDescription and DataRows, as rows, decoded as the database writes it, a chunk at a time (each
 * chunk a view of its memory, valid during the call). Each message is copied once, into a buffer of its own, and decoded when
 * complete; a row's bytea values are views of its message. (Copying the chunks into one buffer that grew by doubling
 * put a fresh ~32 MB allocation, touched page by page, in every 1,000-pet gallery batch.) An ErrorResponse, or a
 * message that cannot be decoded, is thrown by `finish`, never inside the transport's callback.
 */
export class ResponseDecoder {
  private columns: Column[] = [];
  private readonly rows: BinaryRow[] = [];
  private error: Error | null = null;
  /** The message being assembled across chunks, and how many of its bytes have arrived. */
  private partial: Uint8Array | null = null;
  private filled = 0;
  /** A message's type and length (its first five bytes) when a chunk ends among them. */
  private readonly head = new Uint8Array(5);
  private headFilled = 0;
  private broken = false;
  private ended = false;

  /** ReadyForQuery arrived: the response is whole (or it broke, and no more of it will be read). */
  get ready(): boolean {
    return this.ended;
  }

  /** A message could not be framed: the bytes after it cannot be trusted, nor the connection that sent them. */
  get malformed(): boolean {
    return this.broken;
  }

  push(chunk: Uint8Array): number {
    let at = 0;
    while (at < chunk.length && !this.broken) {
      if (!this.partial && this.headFilled === 0 && chunk.length - at >= 5) {
        this.begin(chunk.subarray(at, at + 5));
        at += 5;
      } else if (!this.partial) {
        const n = Math.min(5 - this.headFilled, chunk.length - at);
        this.head.set(chunk.subarray(at, at + n), this.headFilled);
        this.headFilled += n;
        at += n;
        if (this.headFilled < 5) continue;
        this.headFilled = 0;
        this.begin(this.head);
      }
      const message = this.partial;
      if (!message) continue;
      const n = Math.min(message.length - this.filled, chunk.length - at);
      message.set(chunk.subarray(at, at + n), this.filled);
      this.filled += n;
      at += n;
      if (this.filled === message.length) this.complete(message);
    }
    return chunk.length;
  }

  finish(): BinaryRow[] {
    if (this.partial || this.headFilled > 0) this.error ??= new Error("binary query: a truncated response");
    if (this.error) throw this.error;
    return this.rows;
  }

  /** Starts a message from its type and length (its first five bytes); a malformed length ends the decoding. */
  private begin(head: Uint8Array): void {
    const length = 1 + new DataView(head.buffer, head.byteOffset, 5).getInt32(1);
    if (length < 5) {
      this.error ??= new Error("binary query: a malformed response");
      this.broken = true;
      this.ended = true;
      return;
    }
    const message = new Uint8Array(length);
    message.set(head);
    this.filled = 5;
    if (length === 5) this.complete(message);
    else this.partial = message;
  }

  private complete(bytes: Uint8Array): void {
    this.partial = null;
    if (bytes[0] === 0x5a) this.ended = true;
    if (this.error) return;
    try {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const type = bytes[0];
      if (type === 0x54) this.columns = rowDescription(bytes, view, 5);
      else if (type === 0x44) this.rows.push(dataRow(bytes, view, 5, this.columns));
      else if (type === 0x45) this.error = errorResponse(bytes, 5, bytes.length);
    } catch (error) {
      this.error = error instanceof Error ? error : new Error(String(error));
    }
  }
}

function rowDescription(bytes: Uint8Array, view: DataView, at: number): Column[] {
  const count = view.getInt16(at);
  const columns: Column[] = [];
  at += 2;
  for (let c = 0; c < count; c++) {
    const nameEnd = bytes.indexOf(0, at);
    const name = text.decode(bytes.subarray(at, nameEnd));
    at = nameEnd + 1;
    // Table oid (4), column number (2), type oid (4), type size (2), type modifier (4), format (2).
    columns.push({ name, type: view.getUint32(at + 6) });
    at += 18;
  }
  return columns;
}

/** The type oids decoded (PostgreSQL's pg_type). */
const OID = { bool: 16, bytea: 17, name: 19, int8: 20, int2: 21, int4: 23, text: 25, json: 114, float4: 700, float8: 701, varchar: 1043, jsonb: 3802 } as const;
/** The version byte before a jsonb value's text in the binary format. */
const JSONB_VERSION = 1;

function dataRow(bytes: Uint8Array, view: DataView, at: number, columns: Column[]): BinaryRow {
  const count = view.getInt16(at);
  if (count !== columns.length) throw new Error("binary query: a row whose columns the description does not give");
  at += 2;
  const row: BinaryRow = {};
  for (let c = 0; c < count; c++) {
    const length = view.getInt32(at);
    at += 4;
    const { name, type } = columns[c];
    if (length < 0) {
      row[name] = null;
      continue;
    }
    const start = at;
    const value = bytes.subarray(start, start + length);
    at += length;
    if (type === OID.bytea) row[name] = value;
    else if (type === OID.text || type === OID.varchar || type === OID.name) row[name] = text.decode(value);
    else if (type === OID.int8) row[name] = view.getBigInt64(start);
    else if (type === OID.int4) row[name] = view.getInt32(start);
    else if (type === OID.int2) row[name] = view.getInt16(start);
    else if (type === OID.float8) row[name] = view.getFloat64(start);
    else if (type === OID.float4) row[name] = view.getFloat32(start);
    else if (type === OID.bool) row[name] = value[0] !== 0;
    else if (type === OID.json) row[name] = JSON.parse(text.decode(value)) as JsonValue;
    else if (type === OID.jsonb && value[0] === JSONB_VERSION) row[name] = JSON.parse(text.decode(value.subarray(1))) as JsonValue;
    else throw new Error(`binary query: column "${name}" has type oid ${type}, which is not decoded (cast it in the query)`);
  }
  return row;
}

function errorResponse(bytes: Uint8Array, at: number, end: number): Error {
  const fields = new Map<number, string>();
  while (at < end && bytes[at] !== 0) {
    const code = bytes[at];
    const valueEnd = bytes.indexOf(0, at + 1);
    fields.set(code, text.decode(bytes.subarray(at + 1, valueEnd)));
    at = valueEnd + 1;
  }
  const error = new Error(`binary query: ${fields.get(0x4d) ?? "the database refused it"} (SQLSTATE ${fields.get(0x43) ?? "?"})`);
  error.name = "BinaryQueryError";
  return error;
}

function message(type: number, parts: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(parts);
  const out = new Uint8Array(5 + body.length);
  out[0] = type;
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

function cString(value: string): Uint8Array {
  const bytes = utf8.encode(value);
  if (bytes.includes(0)) throw new TypeError("binary query: a NUL character in the statement");
  return Buffer.concat([bytes, Uint8Array.of(0)]);
}

function int16s(values: number[]): Uint8Array {
  const out = new Uint8Array(2 * values.length);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => view.setInt16(2 * i, value));
  return out;
}

function int32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, value);
  return out;
}
