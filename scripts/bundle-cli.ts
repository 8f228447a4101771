// The `codeaction` command's bundle: packages/cli/dist/bundle/, built after tsc by build-packages.ts.
// Node's module loader spent about 800 of the main thread's 1,740 ms of CPU in an `ask` on this
// machine resolving and loading the ~850 files of our packages, LangChain, zod, dockerode and the
// rest one by one; bundled, that `ask` went from 1.44-1.57 s to 1.10-1.40 s (docs/performance.md).
// The bundle serves only the command: `import "@codeaction/cli"` and the other packages stay
// unbundled, and the dependencies stay declared and installed (dynamic imports of model providers
// the user installs, such as @langchain/anthropic, resolve from the installed tree as before).
import { basename, join } from "node:path";
import { build, type Plugin } from "esbuild";
import { assetTables } from "./asset-tables.ts";

// Files read at run time (the bridge's Python files, the image recipes, the desk's page, package.json,
// the worker threads' entries) are found by name through each package's asset table
// (packages/sandbox/src/assets/package-assets.ts), which knows this bundle's layout: a worker's entry
// is the bundle's own `<name>.js` beside the chunks, every other file is read from the installed
// package that ships it (resolved from the bundle, as the unbundled packages would). So the only
// thing this build tells the code is that it is the bundle: `import.meta.codeactionBundle` (below).
// The assets are not copied here: one copy each, in the package that owns it.

/** The command's entry, and one entry per worker thread the asset tables name (`workerEntry`). */
export function bundleEntries(): Record<string, string> {
  const workers = Object.entries(assetTables).flatMap(([packageName, places]) =>
    Object.values(places).flatMap((place) =>
      "workerEntry" in place
        ? [[basename(place.workerEntry), `packages/${packageName}/src/${place.workerEntry}.ts`] as const]
        : [],
    ),
  );
  return { main: "packages/cli/src/main.ts", ...Object.fromEntries(workers) };
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
 * (ESM output has none).
 */
const preamble = [
  'import { createRequire as __codeactionRequire } from "node:module";',
  'import { dirname as __codeactionDirname } from "node:path";',
  'import { fileURLToPath as __codeactionPath } from "node:url";',
  "const require = __codeactionRequire(import.meta.url);",
  "const __filename = __codeactionPath(import.meta.url);",
  "const __dirname = __codeactionDirname(__filename);",
].join("\n");

/** Bundles the command into packages/cli/dist/bundle/ (ESM, split at each dynamic import). */
export async function bundleCli(root: string): Promise<string[]> {
  const outdir = join(root, "packages/cli/dist/bundle");
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.entries(bundleEntries()).map(([out, file]) => ({ in: file, out })),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    outdir,
    chunkNames: "[name]-[hash]",
    banner: { js: preamble },
    // The mark package-assets.ts reads to know it runs from this bundle (a build-time constant).
    define: { "import.meta.codeactionBundle": "true" },
    // ssh2's optional native helpers: required inside try/catch, absent unless compiled.
    external: ["cpu-features", "*.node"],
    plugins: [withoutBuildKitSessions],
    metafile: true,
    logLevel: "warning",
  });
  return Object.keys(result.metafile.outputs);
}
