// Where generated images and audio live until their retention ends. Ids are unguessable (128 random bits),
// so a media URL is a capability: whoever was given it may fetch it.
import { randomBytes } from 'node:crypto';

export interface MediaInfo {
  id: string;
  contentType: string;
  size: number;
  /** hex sha256 of the bytes; also the ETag */
  sha256: string;
  createdAt: string;
}

export interface MediaStore {
  put(bytes: Uint8Array, contentType: string): Promise<MediaInfo>;
  /** undefined when absent */
  info(id: string): Promise<MediaInfo | undefined>;
  /** the bytes in [start, end] inclusive, or all of them */
  read(id: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array>>;
  delete(id: string): Promise<void>;
  /** deletes media created before the cutoff; returns how many */
  pruneOlderThan(cutoff: Date): Promise<number>;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/aac': 'aac',
  'audio/flac': 'flac',
};

export function mediaExtension(contentType: string): string {
  return EXTENSIONS[contentType] ?? 'bin';
}

export function newMediaId(contentType: string): string {
  return `${randomBytes(16).toString('base64url')}.${mediaExtension(contentType)}`;
}

/** Ids are exactly what newMediaId makes: anything else (../, encoded slashes) is not an id. */
export function isMediaId(value: string): boolean {
  return /^[A-Za-z0-9_-]{22}\.[a-z0-9]{2,5}$/.test(value);
}
