// `npm run check-dockerfile` (run by .ci/run): every COPY/ADD source of the Dockerfile must be in the build
// context `.dockerignore` leaves, or `docker build` stops at that step. Exact and mechanical: Docker's own
// ignore rules (scripts/docker-context.ts), no Docker engine needed. Also a few lint rules (dockerfile-lint.ts).
// Exit 1 naming each problem.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DockerIgnore, expandSource, reachesBuilder } from './docker-context.ts';
import { copySources } from './dockerfile-sources.ts';
import { lintDockerfile } from './dockerfile-lint.ts';

export interface DockerfileCheck {
  /** sources checked, as `Dockerfile:<line> <COPY|ADD> <source>` */
  checked: string[];
  problems: string[];
}

/** Checks a Dockerfile (lint rules too) and its context sources against a `.dockerignore` (text; "" if there is none) and the context directory. */
export function checkDockerfile(dockerfile: string, dockerignore: string, contextDir: string): DockerfileCheck {
  const ignore = DockerIgnore.fromFile(dockerignore);
  const { sources, problems } = copySources(dockerfile);
  const checked: string[] = [];
  for (const { line, instruction, source } of sources) {
    const where = `Dockerfile:${line} ${instruction} ${source}`;
    checked.push(where);
    const paths = expandSource(contextDir, source);
    const reaching = paths.filter((path) => reachesBuilder(contextDir, path, ignore));
    if (reaching.length > 0) continue;
    if (paths.length === 0) {
      problems.push(`${where}: matches nothing in the build context`);
      continue;
    }
    const decided = paths.map((path) => ({ path, ...ignore.decide(path) })).find((decision) => decision.excluded);
    problems.push(
      decided
        ? `${where}: left out of the build context by .dockerignore (${decided.path} matches "${decided.pattern}"); add an exception such as "!${decided.path}"`
        : `${where}: not found in the build context`,
    );
  }
  problems.push(...lintDockerfile(dockerfile));
  return { checked, problems };
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { checked, problems } = checkDockerfile(readFileSync(`${root}/Dockerfile`, 'utf8'), readOptional(`${root}/.dockerignore`), root);
  if (problems.length > 0) {
    console.error(`Dockerfile check: ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`Dockerfile check: ${checked.length} COPY/ADD source${checked.length === 1 ? '' : 's'} from the build context, all inside what .dockerignore leaves; lint rules pass`);
}
