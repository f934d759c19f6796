// Log lines for a person at a terminal: pino's JSON turned into `12:03:04.120 INFO  message key=value`, in
// this thread (no transport worker). A line carrying `banner` is drawn as a box, so what it says (sandbox mode)
// cannot be missed in a scrolling log. Machines keep reading JSON: this is only used when asked for or on a TTY.

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '90' },
  20: { name: 'DEBUG', color: '90' },
  30: { name: 'INFO ', color: '32' },
  40: { name: 'WARN ', color: '33' },
  50: { name: 'ERROR', color: '31' },
  60: { name: 'FATAL', color: '35' },
};

/** fields every line has, shown in its own place or not at all */
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'banner']);

const paint = (color: boolean, code: string, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);

function value(field: unknown): string {
  if (typeof field === 'string') return /^[^\s"=]+$/.test(field) ? field : JSON.stringify(field);
  return JSON.stringify(field);
}

function clock(time: unknown): string {
  const date = new Date(typeof time === 'number' ? time : Date.now());
  return date.toISOString().slice(11, 23);
}

const BANNER_WIDTH = 76;

/** `text` in lines of at most `width` characters, broken between words. */
function wrap(text: string, width: number): string[] {
  const indent = /^ */.exec(text)![0];
  const lines: string[] = [];
  let line = indent;
  for (const word of text.slice(indent.length).split(' ')) {
    if (line.trim() && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = line.trim() ? `${line} ${word}` : indent + word;
  }
  return [...lines, line];
}

/** The banner: the message and each field on a line of its own, in a box. */
function box(text: string[], color: boolean, code: string): string {
  const lines = text.flatMap((line) => wrap(line, BANNER_WIDTH));
  const width = Math.max(...lines.map((line) => line.length));
  const edge = '─'.repeat(width + 2);
  const body = lines.map((line) => `│ ${line.padEnd(width)} │`);
  return [`┌${edge}┐`, ...body, `└${edge}┘`].map((line) => paint(color, code, line)).join('\n');
}

/** One JSON log line as text for a person; a line that is not JSON passes through as it is. */
export function prettyLine(json: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = LEVELS[Number(entry.level)] ?? { name: String(entry.level).toUpperCase().padEnd(5), color: '0' };
  const fields = Object.entries(entry).filter(([key]) => !OMITTED.has(key));
  const head = `${paint(color, '90', clock(entry.time))} ${paint(color, level.color, level.name)}`;
  if (entry.banner) {
    const details = fields.flatMap(([key, field]) =>
      field && typeof field === 'object' && !Array.isArray(field)
        ? [`${key}:`, ...Object.entries(field).map(([name, inner]) => `  ${name.padEnd(14)} ${typeof inner === 'string' ? inner : JSON.stringify(inner)}`)]
        : [`${key}: ${typeof field === 'string' ? field : JSON.stringify(field)}`],
    );
    return `${head}\n${box([String(entry.msg ?? ''), ...details], color, level.color)}\n`;
  }
  const rest = fields.map(([key, field]) => `${paint(color, '90', `${key}=`)}${value(field)}`).join(' ');
  return `${head} ${String(entry.msg ?? '')}${rest ? ` ${rest}` : ''}\n`;
}

/** A pino destination that writes each line, made readable, to `target`. */
export function prettyDestination(target: { write(text: string): unknown }, color: boolean): { write(line: string): void } {
  return {
    write(line: string) {
      target.write(prettyLine(line.trimEnd(), color));
    },
  };
}
