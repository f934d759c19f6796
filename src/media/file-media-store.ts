// Media on local disk: <dir>/<id> holds the bytes, <dir>/<id>.json its metadata.
// Writes go to a temporary name first and are renamed, so a reader never sees half a file.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { isMediaId, newMediaId, type MediaInfo, type MediaStore } from './media-store.ts';

export class FileMediaStore implements MediaStore {
  private readonly dir: string;
  private ready: Promise<unknown> | undefined;

  constructor(dir: string) {
    this.dir = dir;
  }

  private ensureDir(): Promise<unknown> {
    this.ready ??= mkdir(this.dir, { recursive: true });
    return this.ready;
  }

  async put(bytes: Uint8Array, contentType: string): Promise<MediaInfo> {
    await this.ensureDir();
    const id = newMediaId(contentType);
    const info: MediaInfo = {
      id,
      contentType,
      size: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      createdAt: new Date().toISOString(),
    };
    const path = join(this.dir, id);
    await writeFile(`${path}.tmp`, bytes);
    await rename(`${path}.tmp`, path);
    await writeFile(`${path}.json`, JSON.stringify(info));
    return info;
  }

  async info(id: string): Promise<MediaInfo | undefined> {
    if (!isMediaId(id)) return undefined;
    try {
      return JSON.parse(await readFile(join(this.dir, `${id}.json`), 'utf8')) as MediaInfo;
    } catch {
      return undefined;
    }
  }

  async read(id: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array>> {
    if (!isMediaId(id)) throw new Error('not a media id');
    const stream = createReadStream(join(this.dir, id), range);
    return Readable.toWeb(stream) as ReadableStream<Uint8Array>;
  }

  async delete(id: string): Promise<void> {
    if (!isMediaId(id)) return;
    await rm(join(this.dir, `${id}.json`), { force: true });
    await rm(join(this.dir, id), { force: true });
  }

  async pruneOlderThan(cutoff: Date): Promise<number> {
    await this.ensureDir();
    let pruned = 0;
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const info = await this.info(name.slice(0, -'.json'.length));
      if (info && new Date(info.createdAt) < cutoff) {
        await this.delete(info.id);
        pruned++;
      }
    }
    return pruned;
  }
}
