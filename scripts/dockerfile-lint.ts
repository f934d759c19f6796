// A few hadolint-style rules for the Dockerfile, the ones whose breach would hurt this service: run by
// `npm run check-dockerfile` beside the build-context check (scripts/check-dockerfile.ts).
import { logicalLines } from './dockerfile-sources.ts';

/** `FROM` images with their `${ARG}`s resolved from the ARG defaults declared before the first FROM. */
function resolveArgs(text: string, args: Map<string, string>): string {
  return text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (whole, name: string) => args.get(name) ?? whole);
}

/** Each problem as `Dockerfile:<line> <what>: <why>`. */
export function lintDockerfile(dockerfile: string): string[] {
  const problems: string[] = [];
  const globalArgs = new Map<string, string>();
  const stages = new Set<string>();
  let seenFrom = false;
  let user: { line: number; name: string } | undefined;
  let command: { line: number; instruction: string } | undefined;
  for (const { line, text } of logicalLines(dockerfile)) {
    const [word = '', ...restWords] = text.split(/\s+/);
    const instruction = word.toUpperCase();
    const rest = text.slice(word.length).trim();
    const where = `Dockerfile:${line} ${instruction}`;
    if (instruction === 'ARG' && !seenFrom) {
      const [name = '', value] = rest.split('=');
      if (value !== undefined) globalArgs.set(name, value.replace(/^"(.*)"$/, '$1'));
    }
    if (instruction === 'FROM') {
      seenFrom = true;
      user = undefined;
      command = undefined;
      const [image = ''] = restWords.filter((w) => !w.startsWith('--'));
      const alias = /\s+AS\s+(\S+)\s*$/i.exec(rest)?.[1];
      const resolved = resolveArgs(image, globalArgs);
      if (!stages.has(resolved) && resolved !== 'scratch') {
        const tag = resolved.includes('@') ? 'digest' : /:[^/]+$/.exec(resolved)?.[0].slice(1);
        if (!tag) problems.push(`${where} ${image}: the image has no tag; pin one (builds must be repeatable)`);
        else if (tag === 'latest') problems.push(`${where} ${image}: "latest" moves; pin a version`);
      }
      if (alias) stages.add(alias);
    }
    if (instruction === 'USER') user = { line, name: rest };
    if (instruction === 'CMD' || instruction === 'ENTRYPOINT') {
      command = { line, instruction };
      if (!rest.startsWith('[')) {
        problems.push(`${where}: use the JSON (exec) form; the shell form runs under /bin/sh, which does not pass SIGTERM on, so no graceful shutdown`);
      }
    }
    if (instruction === 'ADD') {
      const sources = rest.split(/\s+/).filter((w) => !w.startsWith('--')).slice(0, -1);
      if (sources.some((source) => !/^(https?:\/\/|git@)/.test(source) && !/\.(tar(\.\w+)?|tgz)$/.test(source))) {
        problems.push(`${where}: use COPY for local files (ADD also unpacks archives and fetches URLs)`);
      }
    }
  }
  if (command && (!user || /^(root|0)(:|$)/.test(user.name))) {
    problems.push(`Dockerfile:${command.line} ${command.instruction}: the final stage runs as root; switch to an unprivileged USER before it`);
  }
  return problems;
}
