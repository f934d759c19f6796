// Where the CLI saves what was paid for. Everything that can be checked is checked before paying (the name's
// extension against the audio format, a file already there, a directory that cannot be made); after paying
// nothing is ever overwritten: a name taken meanwhile gets a numbered sibling instead.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { UsageError } from './command-line.ts';

/** the file name extensions each audio format is saved under (the first is the gateway's own) */
const AUDIO_EXTENSIONS: Record<string, string[]> = {
  wav: ['.wav'],
  mp3: ['.mp3'],
  ogg: ['.ogg', '.oga'],
  opus: ['.ogg', '.opus'],
  aac: ['.aac'],
  flac: ['.flac'],
};

/**
 * The audio format a speech request asks for, given --format and --out: the format named, checked against the
 * file name's extension; else the one the extension names; else none (the model's default, saved as served).
 */
export function speechFormat(format: string | undefined, out: string | undefined): string | undefined {
  const extension = out === undefined ? '' : extname(out).toLowerCase();
  if (format !== undefined) {
    const fits = AUDIO_EXTENSIONS[format];
    if (fits && extension && !fits.includes(extension)) {
      throw new UsageError(`--out ${out} does not fit --format ${format}: name the file ${fits.join(' or ')}`);
    }
    return format;
  }
  if (!extension) return undefined;
  const named = Object.keys(AUDIO_EXTENSIONS).find((name) => AUDIO_EXTENSIONS[name]!.includes(extension)); // .ogg: Vorbis
  if (!named) {
    const known = [...new Set(Object.values(AUDIO_EXTENSIONS).flat())].join(' ');
    throw new UsageError(`--out ${out}: ${extension} is not an audio file extension (${known}); or pass --format`);
  }
  return named;
}

/** the name a media URL saves under when its own would not do (none, `.` or `..`: a path up and out of --out) */
const FALLBACK_NAME = 'media';

/**
 * The local file name of a paid media URL: the last segment of its path, never starting with `-` (media ids are
 * base64url: a name like `-x1.png` would read as an option to the next command given it, e.g. `rm -x1.png`), never
 * empty, `.` or `..` (the gateway chooses the URL: the file stays in the folder the user chose). Never throws: it
 * is called after paying.
 */
export function mediaFileName(url: string): string {
  let name = '';
  try {
    name = basename(decodeURIComponent(new URL(url).pathname));
  } catch {
    // not a URL, or a malformed escape in its path: the fallback name
  }
  const safe = name === '' || name === '.' || name === '..' || /[/\\]/.test(name) ? FALLBACK_NAME : name;
  return safe.replace(/^-+/, (dashes) => '_'.repeat(dashes.length));
}

/** Before paying: the file must not exist yet, and its folder must exist or be made. */
export async function prepareOutputFile(path: string): Promise<void> {
  if (await exists(path)) throw new UsageError(`${path} already exists: nothing was paid; remove it or choose another --out`);
  await makeFolder(dirname(path));
}

/** Before paying: the folder for several files, made if missing. */
export async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    throw new UsageError(`cannot use ${path} as the output folder: ${(error as Error).message}; nothing was paid`);
  }
}

/** After paying: writes the bytes to `path`, or to `name-1.ext`, `name-2.ext`... if it is taken; returns where. */
export async function saveWithoutOverwriting(path: string, bytes: Uint8Array): Promise<string> {
  const extension = extname(path);
  const stem = join(dirname(path), basename(path, extension));
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? path : `${stem}-${n}${extension}`;
    try {
      await writeFile(candidate, bytes, { flag: 'wx' });
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
