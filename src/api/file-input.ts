// A file a client puts in a message (OpenAI's `file` part on Chat Completions, `input_file` on Responses): a text
// file sent inline is read as its text, its name first; any other (a PDF, a file by id or URL) is not passed to a
// model here: a sentence says it was there, and the part is named in X-Ignored-Fields.
import type { RequestNotes } from './request-notes.ts';

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/;
const TEXT_TYPE = /^(text\/[\w.+-]+|application\/(json|xml|yaml|x-yaml|javascript|x-sh|csv|x-ndjson))$/i;

export interface FileInput {
  /** a data: URL, as OpenAI's clients send a file inline */
  file_data?: string | null | undefined;
  filename?: string | null | undefined;
}

/** What the model reads of a file part at `field`. */
export function fileText(file: FileInput, field: string, notes: RequestNotes): string {
  const text = inlineText(file.file_data ?? undefined);
  const name = file.filename ?? undefined;
  if (text !== undefined) return name ? `${name}\n${text}` : text;
  notes.ignore(field);
  return `[a file${name ? ` (${name})` : ''} that is not passed to the model here]`;
}

/** the text of a data: URL of a text type; undefined for any other */
function inlineText(dataUrl: string | undefined): string | undefined {
  const match = dataUrl === undefined ? null : DATA_URL.exec(dataUrl);
  if (!match || !TEXT_TYPE.test(match[1]!)) return undefined;
  const payload = dataUrl!.slice(match[0].length);
  if (match[2]!.split(';').includes('base64')) return Buffer.from(payload, 'base64').toString('utf8');
  try {
    return decodeURIComponent(payload);
  } catch {
    return undefined;
  }
}
