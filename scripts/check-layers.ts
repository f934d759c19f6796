// Holds the code to the layer map in docs/architecture.md ("Layers"): every import of a module under src/ (static,
// dynamic or type-only; tests excluded) into another layer must be one that layer's line allows, and no modules may
// import each other in a circle. Prints every finding and exits 1 if there is one. Run by .ci/run.
//   node scripts/check-layers.ts
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const src = join(root, 'src');

/** The layer map: each layer and the layers it may import, from the fenced block after "## Layers". */
export function readLayerMap(markdown: string): Map<string, Set<string>> {
  const section = markdown.split(/^## Layers$/m)[1];
  const block = section?.match(/```text\n([\s\S]*?)```/)?.[1];
  if (!block) throw new Error('docs/architecture.md has no "## Layers" section with a ```text block');
  const map = new Map<string, Set<string>>();
  for (const line of block.split('\n')) {
    const match = line.match(/^([\w.-]+):\s*(.*)$/);
    if (match) map.set(match[1]!, new Set(match[2]!.split(/\s+/).filter((name) => name && name !== '-')));
  }
  return map;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs)$/.test(name) && !/\.test\.ts$/.test(name) && !/\.d\.m?ts$/.test(name) ? [path] : [];
  });
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The relative imports of a module, as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => normalize(join(dirname(file), match[1]!)));
}

/** The layer of a module: its folder under src/, or its own name for a file at src/'s top. */
function layerOf(file: string): string {
  return relative(src, file).split('/')[0]!;
}

/** Circles among modules (Tarjan's strongly connected components of more than one module). */
function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

export function findings(): string[] {
  const layers = readLayerMap(readFileSync(join(root, 'docs/architecture.md'), 'utf8'));
  const problems: string[] = [];
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(src)) {
    const from = layerOf(file);
    const allowed = layers.get(from);
    if (!allowed) problems.push(`${relative(root, file)}: layer "${from}" is not on the map`);
    const targets = importsOf(file).filter((target) => target.startsWith(src + '/'));
    graph.set(file, targets);
    for (const target of targets) {
      const to = layerOf(target);
      if (to !== from && allowed && !allowed.has(to)) problems.push(`${relative(root, file)} imports ${relative(root, target)}: "${from}" may not import "${to}"`);
    }
  }
  for (const circle of circles(graph)) problems.push(`circle: ${circle.map((file) => relative(root, file)).join(' -> ')}`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = findings();
  for (const problem of problems) console.error(problem);
  console.log(problems.length === 0 ? 'layers: every import follows docs/architecture.md' : `layers: ${problems.length} finding(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}
