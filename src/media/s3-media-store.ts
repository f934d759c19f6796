// Media in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Backblaze B2, Ceph, ...): one object per
// id under an optional prefix, its content type as Content-Type and its hash and creation time as user
// metadata. Objects are written once and never changed, so LastModified is their creation time too.
import { createHash } from 'node:crypto';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { isMediaId, newMediaId, type MediaInfo, type MediaStore } from './media-store.ts';

export interface S3MediaStoreOptions {
  bucket: string;
  /** key prefix, e.g. "media/"; empty for the bucket root */
  prefix?: string;
  region: string;
  /** for S3-compatible stores; omitted for AWS */
  endpoint?: string;
  /** path-style URLs (bucket in the path), which most S3-compatible stores want */
  forcePathStyle?: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

const DELETE_BATCH = 1000; // the most DeleteObjects takes at once

export class S3MediaStore implements MediaStore {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(options: S3MediaStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
      credentials: options.credentials,
      // many S3-compatible stores do not understand the newer default (CRC32 checksums on every request)
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private key(id: string): string {
    return `${this.prefix}${id}`;
  }

  async put(bytes: Uint8Array, contentType: string): Promise<MediaInfo> {
    const id = newMediaId(contentType);
    const info: MediaInfo = {
      id,
      contentType,
      size: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      createdAt: new Date().toISOString(),
    };
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key(id),
        Body: bytes,
        ContentType: contentType,
        ContentLength: bytes.byteLength,
        CacheControl: 'public, max-age=31536000, immutable',
        Metadata: { sha256: info.sha256, 'created-at': info.createdAt },
      }),
    );
    return info;
  }

  async info(id: string): Promise<MediaInfo | undefined> {
    if (!isMediaId(id)) return undefined;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(id) }));
      const sha256 = head.Metadata?.sha256;
      if (!sha256) return undefined; // not written by us
      return {
        id,
        contentType: head.ContentType ?? 'application/octet-stream',
        size: head.ContentLength ?? 0,
        sha256,
        createdAt: head.Metadata?.['created-at'] ?? head.LastModified?.toISOString() ?? new Date(0).toISOString(),
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async read(id: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array>> {
    if (!isMediaId(id)) throw new Error('not a media id');
    const object = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.key(id),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    if (!object.Body) throw new Error(`media ${id} has no body`);
    const body = object.Body.transformToWebStream() as ReadableStream<Uint8Array>;
    if (!range) return body;
    // Some S3-compatible servers ignore or widen a range (s3rver answers "bytes=0-0" with the whole object):
    // cut what came back down to what was asked.
    const served = /^bytes (\d+)-(\d+)\//.exec(object.ContentRange ?? '');
    const servedStart = served ? Number(served[1]) : 0;
    if (served && servedStart === range.start && Number(served[2]) === range.end) return body;
    if (servedStart > range.start) throw new Error(`media ${id}: store served bytes from ${servedStart}, not ${range.start}`);
    return body.pipeThrough(byteSlice(range.start - servedStart, range.end - range.start + 1));
  }

  async delete(id: string): Promise<void> {
    if (!isMediaId(id)) return;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(id) }));
  }

  async pruneOlderThan(cutoff: Date): Promise<number> {
    let pruned = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix || undefined, ContinuationToken: token }),
      );
      const stale = (page.Contents ?? [])
        .filter((object) => object.Key && object.LastModified && object.LastModified < cutoff)
        .map((object) => object.Key!)
        // only what this store wrote: an id directly under the prefix
        .filter((key) => isMediaId(key.slice(this.prefix.length)));
      for (let i = 0; i < stale.length; i += DELETE_BATCH) {
        const batch = stale.slice(i, i + DELETE_BATCH);
        const result = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
        );
        pruned += batch.length - (result.Errors?.length ?? 0);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return pruned;
  }

  close(): void {
    this.client.destroy();
  }
}

/** Passes `length` bytes starting at `skip`, then stops. */
function byteSlice(skip: number, length: number): TransformStream<Uint8Array, Uint8Array> {
  let position = 0;
  const end = skip + length;
  return new TransformStream({
    transform(chunk, controller) {
      const from = Math.max(0, skip - position);
      const to = Math.min(chunk.byteLength, end - position);
      position += chunk.byteLength;
      if (to > from) controller.enqueue(chunk.subarray(from, to));
      if (position >= end) controller.terminate();
    },
  });
}

function isNotFound(error: unknown): boolean {
  if (error instanceof S3ServiceException) {
    return error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404;
  }
  return false;
}
