import fs from "node:fs";

/**
 * Byte streams for a gallery shard's snapshot (InvertedIndex.writeSnapshot / readSnapshot): written and read in large
 * chunks, so that a shard of a gigabyte goes to and from the file in a few hundred system calls.
 */
export interface SnapshotSink {
  write(bytes: Uint8Array): void;
}

/** A snapshot written a slice at a time: each `write(budget)` writes about `budget` bytes and says whether it is whole. */
export interface SnapshotWriter {
  write(budget: number): boolean;
}

export interface SnapshotSource {
  /** The next `length` bytes; the view is valid until the next read. Throws when the stream ends first. */
  read(length: number): Uint8Array;
}

/** Bytes a chunk: large enough that a system call is rare, small enough to hold beside a shard. */
const CHUNK_BYTES = 32 * 1024 * 1024;

export class SnapshotCorruptError extends Error {
  override name = "SnapshotCorruptError";
}

/**
 * A snapshot written a slice at a time whose index changed (or was replaced) between two slices: written no further.
 * Thrown in the worker and thrown again, as the same class, by the facade (`gallerySave`).
 */
export class SnapshotChangedError extends Error {
  static readonly errorName = "SnapshotChangedError";
  override name = SnapshotChangedError.errorName;
}

/** Writes to a file descriptor through one chunk-sized buffer. */
export class FileSink implements SnapshotSink {
  private readonly buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  private used = 0;

  constructor(private readonly fd: number) {}

  write(bytes: Uint8Array): void {
    if (bytes.byteLength > CHUNK_BYTES - this.used) this.flush();
    if (bytes.byteLength > CHUNK_BYTES) {
      fs.writeSync(this.fd, bytes);
      return;
    }
    this.buffer.set(bytes, this.used);
    this.used += bytes.byteLength;
  }

  flush(): void {
    let at = 0;
    while (at < this.used) at += fs.writeSync(this.fd, this.buffer, at, this.used - at);
    this.used = 0;
  }
}

/** Reads a file descriptor a chunk at a time; a read larger than a chunk gets a buffer of its own. */
export class FileSource implements SnapshotSource {
  private buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  private start = 0;
  private end = 0;
  /** Bytes of the file not yet read into the buffer. */
  private unread: number;

  constructor(private readonly fd: number) {
    this.unread = fs.fstatSync(fd).size;
  }

  read(length: number): Uint8Array {
    if (this.end - this.start < length) {
      if (length - (this.end - this.start) > this.unread) throw new SnapshotCorruptError("the snapshot ends early");
      this.fill(length);
    }
    const view = this.buffer.subarray(this.start, this.start + length);
    this.start += length;
    return view;
  }

  private fill(length: number): void {
    const held = this.end - this.start;
    if (length > this.buffer.byteLength) {
      const bigger = Buffer.allocUnsafeSlow(length);
      this.buffer.copy(bigger, 0, this.start, this.end);
      this.buffer = bigger;
    } else {
      this.buffer.copyWithin(0, this.start, this.end);
    }
    this.start = 0;
    this.end = held;
    while (this.end < length) {
      const got = fs.readSync(this.fd, this.buffer, this.end, this.buffer.byteLength - this.end, null);
      if (got === 0) throw new SnapshotCorruptError("the snapshot ends early");
      this.end += got;
      this.unread -= got;
    }
  }
}
