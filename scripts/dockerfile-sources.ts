// The build-context sources of a Dockerfile's COPY and ADD instructions, read as BuildKit's Dockerfile parser
// reads them: the `# escape=` directive, line continuations (comment and blank lines inside them skipped),
// flags (`--from=` copies from a stage or image, not the context; `--chown`, `--chmod`, `--link`...), the JSON
// array form and the whitespace form, several sources before the destination, heredocs (inline content).

export interface CopySource {
  /** 1-based line of the instruction */
  line: number;
  instruction: 'COPY' | 'ADD';
  source: string;
}

export interface ParsedCopies {
  sources: CopySource[];
  /** instructions this reader cannot check exactly (a variable in a source): reported, never passed over */
  problems: string[];
}

/** The parser directive `# escape=X` (only before the first instruction or comment that is not a directive). */
function escapeCharacter(lines: string[]): string {
  for (const line of lines) {
    const directive = /^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$/.exec(line);
    if (!directive) break;
    if (directive[1]!.toLowerCase() === 'escape' && (directive[2] === '`' || directive[2] === '\\')) return directive[2];
  }
  return '\\';
}

/** Instructions with their first line, continuation lines joined (comments and blank lines inside dropped). */
export function logicalLines(text: string): { line: number; text: string }[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const escape = escapeCharacter(lines);
  const result: { line: number; text: string }[] = [];
  for (let i = 0; i < lines.length; ) {
    const start = i;
    let current = lines[i++]!;
    if (/^\s*(#|$)/.test(current)) continue;
    while (current.trimEnd().endsWith(escape) && i < lines.length) {
      current = current.trimEnd().slice(0, -1);
      while (i < lines.length && /^\s*(#|$)/.test(lines[i]!)) i++;
      if (i < lines.length) current += lines[i++]!;
    }
    // heredoc bodies (`COPY <<EOF dest`) are inline text: skip them to their terminator
    for (const heredoc of current.matchAll(/<<-?(["']?)([A-Za-z_][A-Za-z0-9_]*)\1/g)) {
      while (i < lines.length && lines[i]!.replace(/^\t+/, '') !== heredoc[2]) i++;
      i++;
    }
    result.push({ line: start + 1, text: current.trim() });
  }
  return result;
}

/** `--name=value` and bare `--name` flags at the start of the arguments, and what follows them. */
function splitFlags(args: string): { flags: Map<string, string>; rest: string } {
  const flags = new Map<string, string>();
  let rest = args.trimStart();
  for (let flag = /^--([a-zA-Z-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest); flag; flag = /^--([a-zA-Z-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest)) {
    flags.set(flag[1]!.toLowerCase(), flag[2] ?? '');
    rest = rest.slice(flag[0].length);
  }
  return { flags, rest };
}

/** The sources and destination: a JSON array of strings, else whitespace-separated words. */
function splitArguments(rest: string): string[] {
  if (rest.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(rest);
      if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed as string[];
    } catch {
      // not JSON: Docker reads it as the whitespace form too
    }
  }
  return rest.split(/\s+/).filter(Boolean);
}

const REMOTE = /^(https?:\/\/|git@|git:\/\/|ssh:\/\/)/i;

/** Every build-context source of the Dockerfile's COPY/ADD instructions. */
export function copySources(dockerfile: string): ParsedCopies {
  const sources: CopySource[] = [];
  const problems: string[] = [];
  for (const { line, text } of logicalLines(dockerfile)) {
    const instruction = /^(COPY|ADD)\s+(.*)$/is.exec(text);
    if (!instruction) continue;
    const name = instruction[1]!.toUpperCase() as 'COPY' | 'ADD';
    const { flags, rest } = splitFlags(instruction[2]!);
    if (flags.has('from')) continue; // from a build stage or an image: not the context
    const words = splitArguments(rest);
    if (words.length < 2) {
      problems.push(`Dockerfile:${line} ${name} needs at least one source and a destination`);
      continue;
    }
    for (const source of words.slice(0, -1)) {
      if (source.startsWith('<<')) continue; // a heredoc: inline content
      if (name === 'ADD' && REMOTE.test(source)) continue; // fetched by the builder, not the context
      if (source.includes('$')) {
        problems.push(`Dockerfile:${line} ${name} ${source}: a variable in a source cannot be checked; write the path out`);
        continue;
      }
      sources.push({ line, instruction: name, source });
    }
  }
  return { sources, problems };
}

/**
 * The environment the final stage of the Dockerfile sets (its `ENV` instructions after the last `FROM`), in
 * `ENV key=value ...` and `ENV key value` forms; quotes around a value are removed.
 */
export function dockerfileEnv(dockerfile: string): Record<string, string> {
  let env: Record<string, string> = {};
  const unquote = (value: string) => value.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
  for (const { text } of logicalLines(dockerfile)) {
    if (/^FROM\s/i.test(text)) env = {};
    const instruction = /^ENV\s+(.*)$/is.exec(text);
    if (!instruction) continue;
    const rest = instruction[1]!.trim();
    const words = rest.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? [];
    if (words[0]?.includes('=')) {
      for (const word of words) {
        const at = word.indexOf('=');
        env[word.slice(0, at)] = unquote(word.slice(at + 1));
      }
    } else if (words[0]) env[words[0]] = unquote(rest.slice(words[0].length).trim());
  }
  return env;
}
