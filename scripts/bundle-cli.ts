// The `codeaction` command's bundle: packages/cli/dist/bundle/, built after tsc by build-packages.ts.
// Node's module loader spent about 800 of the main thread's 1,740 ms of CPU in an `ask` on this
// machine resolving and loading the ~850 files of our packages, LangChain, zod, dockerode and the
// rest one by one; bundled, that `ask` went from 1.44-1.57 s to 1.10-1.40 s (docs/performance.md).
// The bundle serves only the command: `import "@codeaction/cli"` and the other packages stay
// unbundled, and the dependencies stay declared and installed (dynamic imports of model providers
// the user installs, such as @langchain/anthropic, resolve from the installed tree as before).
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { build, type Plugin } from "esbuild";

/** The command's entry and the worker threads' entries: each a file of its own in the bundle. */
const entries = {
  main: "packages/cli/src/main.ts",
  "scan-worker": "packages/cli/src/data-files/scan-worker.ts",
  "prelaunch-worker": "packages/sandbox/src/prelaunch/prelaunch-worker.ts",
};

/**
 * Modules that start a worker by `new URL("./<entry>.js", import.meta.url)`: in the bundle, the
 * chunk that holds them sits beside the worker's entry, so their import.meta.url stays the chunk's.
 */
const workerStarters = [
  "packages/cli/src/data-files/scan-thread.ts",
  "packages/sandbox/src/prelaunch/prelaunch.ts",
];

/**
 * Every other `import.meta.url` of our sources names a file beside it in the installed package
 * (the bridge's Python files, the image recipes, package.json): it becomes the URL that module has
 * when installed, found from the package the bundle resolves (`<name>/package.json`), so the
 * bundle reads the same files as the unbundled packages wherever the installer put them.
 */
function installedModuleUrls(root: string): Plugin {
  return {
    name: "installed-module-urls",
    setup(builder) {
      builder.onLoad({ filter: /\/packages\/(core|sandbox|cli)\/src\/.*\.ts$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        const path = relative(root, args.path);
        if (!source.includes("import.meta.url") || workerStarters.includes(path)) {
          return { contents: source, loader: "ts" };
        }
        const [, packageName, inSource] = path.match(/^packages\/([a-z]+)\/src\/(.+)\.ts$/) ?? [];
        const installed = JSON.stringify(`dist/${inSource}.js`);
        const url = `__codeactionInstalledUrl(${JSON.stringify(`@codeaction/${packageName}`)}, ${installed})`;
        return { contents: source.replaceAll("import.meta.url", url), loader: "ts" };
      });
    },
  };
}

/**
 * dockerode's BuildKit session (lib/session.js) loads gRPC and its protobuf loader on every import,
 * about 0.1 s of CPU per thread; we never build with BuildKit (images are imported, image.ts), so
 * the bundle has a stand-in that says so if it is ever called.
 */
const withoutBuildKitSessions: Plugin = {
  name: "without-buildkit-sessions",
  setup(builder) {
    builder.onResolve({ filter: /^\.\/session$/ }, (args) =>
      /\/dockerode\/lib\/docker\.js$/.test(args.importer)
        ? { path: "dockerode-session", namespace: "codeaction-stub" }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "codeaction-stub" }, () => ({
      contents:
        'module.exports = function withSession() { throw new Error("BuildKit sessions are not in the codeaction command\'s bundle"); };',
      loader: "js",
    }));
  },
};

/**
 * Each chunk's preamble: `require`, `__filename` and `__dirname` for the CommonJS dependencies
 * (ESM output has none), and the installed-URL function the plugin's rewrites call.
 */
const preamble = [
  'import { createRequire as __codeactionRequire } from "node:module";',
  'import { dirname as __codeactionDirname, join as __codeactionJoin } from "node:path";',
  'import { fileURLToPath as __codeactionPath, pathToFileURL as __codeactionUrl } from "node:url";',
  "const require = __codeactionRequire(import.meta.url);",
  "const __filename = __codeactionPath(import.meta.url);",
  "const __dirname = __codeactionDirname(__filename);",
  "const __codeactionInstalledUrl = (name, file) =>",
  '  __codeactionUrl(__codeactionJoin(__codeactionDirname(require.resolve(name + "/package.json")), file)).href;',
].join("\n");

/** Bundles the command into packages/cli/dist/bundle/ (ESM, split at each dynamic import). */
export async function bundleCli(root: string): Promise<string[]> {
  const outdir = join(root, "packages/cli/dist/bundle");
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.entries(entries).map(([out, file]) => ({ in: file, out })),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    outdir,
    chunkNames: "[name]-[hash]",
    banner: { js: preamble },
    // ssh2's optional native helpers: required inside try/catch, absent unless compiled.
    external: ["cpu-features", "*.node"],
    plugins: [installedModuleUrls(root), withoutBuildKitSessions],
    metafile: true,
    logLevel: "warning",
  });
  return Object.keys(result.metafile.outputs);
}
