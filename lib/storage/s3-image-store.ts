import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { logError } from "@/lib/log";
import type { ImageStore, StoredImage } from "./images";

/**
 * Images in an S3-compatible object store. STORAGE_URL names it:
 * `s3://BUCKET[/PREFIX][?endpoint=http://host:port&region=REGION&forcePathStyle=true|false]`.
 * Without an endpoint it is AWS S3 itself. Credentials come from the SDK's usual chain
 * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profile, instance role), never from the URL, so
 * they stay out of configuration that is logged or shown.
 */
export class S3ImageStore implements ImageStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  static fromUrl(storageUrl: string): S3ImageStore {
    const url = new URL(storageUrl);
    if (url.protocol !== "s3:" || !url.hostname) throw new Error("STORAGE_URL must look like s3://bucket[/prefix]?endpoint=...&region=...");
    if (url.username || url.password) throw new Error("STORAGE_URL must not carry credentials: use AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY");
    const endpoint = url.searchParams.get("endpoint") ?? undefined;
    const client = new S3Client({
      endpoint,
      region: url.searchParams.get("region") ?? process.env.AWS_REGION ?? "us-east-1",
      // Self-hosted stores (MinIO, moto, Ceph) rarely have per-bucket DNS names.
      forcePathStyle: (url.searchParams.get("forcePathStyle") ?? (endpoint ? "true" : "false")) === "true",
    });
    return new S3ImageStore(client, url.hostname, url.pathname.replace(/^\/+|\/+$/g, ""));
  }

  async write(key: string, bytes: Uint8Array): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: bytes, ContentType: "image/jpeg" }));
  }

  async read(key: string): Promise<Uint8Array> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    if (!object.Body) throw new Error(`image ${key} has no body`);
    return object.Body.transformToByteArray();
  }

  /** Like the disk store, a failure is logged, not thrown: the rows are already gone, an orphan object is harmless. */
  async remove(keys: string[]): Promise<void> {
    // DeleteObjects takes at most 1,000 keys; deleting a missing key succeeds.
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000).map((key) => ({ Key: this.objectKey(key) }));
      try {
        const result = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch, Quiet: true } }));
        for (const failure of result.Errors ?? []) logError("image-remove-failed", new Error(`${failure.Code}: ${failure.Message}`), { key: failure.Key });
      } catch (error) {
        logError("image-remove-failed", error, { keys: batch.length });
      }
    }
  }

  /** Keys come back in lexicographic order, so one account's images come together. */
  async *list(): AsyncIterable<StoredImage> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.objectKey("images/"), ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        yield { key: this.prefix ? object.Key.slice(this.prefix.length + 1) : object.Key, modifiedMs: object.LastModified?.getTime() ?? 0 };
      }
      token = page.NextContinuationToken;
    } while (token);
  }

  private objectKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }
}
