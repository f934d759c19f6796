// `node scripts/lean-install.ts` (npm's postinstall, and the Docker build after its install): removes from
// node_modules what this machine can never load, so a runtime install (`npm install --omit=dev`) stays small
// (docs/performance.md, "Install size"). Nothing else is touched, and a missing path is no error:
// - the C headers of the Node that the `node` package installs (node-<os>-<arch>/include, 67 MB): they serve
//   native addons compiled against that Node, and no dependency compiles one (prebuilt binaries; node-gyp fetches
//   its own headers when it does build);
// - node-llama-cpp's prebuilt binaries for another CPU (`@node-llama-cpp/linux-arm64` and `linux-armv7l` on x64,
//   32 MB): they declare x64 too, so npm installs them everywhere, and node-llama-cpp loads only the one for
//   process.arch.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const modules = join(import.meta.dirname, '..', 'node_modules');

/** node-llama-cpp's words for process.platform and process.arch, in its package names (`@node-llama-cpp/<os>-<arch>[-gpu]`) */
const LLAMA_OS: Record<string, string> = { darwin: 'mac', win32: 'win' };
const LLAMA_ARCH: Record<string, string> = { arm: 'armv7l' };

function removable(): string[] {
  const paths: string[] = [];
  const nodeModules = join(modules, 'node', 'node_modules');
  if (existsSync(nodeModules)) {
    for (const name of readdirSync(nodeModules)) if (name.startsWith('node-')) paths.push(join(nodeModules, name, 'include'));
  }
  const llama = join(modules, '@node-llama-cpp');
  if (existsSync(llama)) {
    const os = `${LLAMA_OS[process.platform] ?? process.platform}-`;
    const arch = LLAMA_ARCH[process.arch] ?? process.arch;
    // another CPU of this OS: `linux-arm64` on linux x64, never `linux-x64-vulkan` (a GPU build for this CPU)
    for (const name of readdirSync(llama)) if (name.startsWith(os) && name.slice(os.length).split('-')[0] !== arch) paths.push(join(llama, name));
  }
  return paths.filter((path) => existsSync(path));
}

for (const path of removable()) rmSync(path, { recursive: true, force: true });
