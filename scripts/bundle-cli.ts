// The `codeaction` command's bundle: packages/cli/dist/bundle/, built after tsc by build-packages.ts.
// Node's module loader spent about 800 of the main thread's 1,740 ms of CPU in an `ask` on this
// machine resolving and loading the ~850 files of our packages, LangChain, zod, dockerode and the
// rest one by one; bundled, that `ask` went from 1.44-1.57 s to 1.10-1.40 s (docs/performance.md).
// The bundle is the whole package: the command (`main`) and the library (`index`, what
// `import "@codeaction/cli"` loads) hold our packages and every dependency, so @codeaction/cli
// declares no dependency and an install of it is its tarball alone (issue 43, item 10). Dynamic
// imports of model providers the user installs, such as @langchain/anthropic, resolve from the
// project's tree, with the project's own @langchain/core.
import { cpSync } from "node:fs";
import { basename, join } from "node:path";
import { build, type Plugin } from "esbuild";
import { assetTables } from "./asset-tables.ts";

// Files read at run time (the bridge's Python files, the image recipes, the desk's page, package.json,
// the worker threads' entries) are found by name through each package's asset table
// (packages/sandbox/src/assets/package-assets.ts), which knows this bundle's layout: a worker's entry
// is the bundle's own `<name>.js` beside the chunks; the CLI's own files are read from the installed
// CLI; the other packages' files from the bundle's copy, `packages/<name>/` in the package's own
// layout (copied below). So the only thing this build tells the code is that it is the bundle, and
// whose: `import.meta.codeactionBundle` (below).

/** The package that ships the bundle: its own files are read where it is installed. */
const bundleOwner = "@codeaction/cli";

/** The command's entry, the library's, and one entry per worker thread the asset tables name (`workerEntry`). */
export function bundleEntries(): Record<string, string> {
  const workers = Object.entries(assetTables).flatMap(([packageName, places]) =>
    Object.values(places).flatMap((place) =>
      "workerEntry" in place
        ? [[basename(place.workerEntry), `packages/${packageName}/src/${place.workerEntry}.ts`] as const]
        : [],
    ),
  );
  return {
    main: "packages/cli/src/main.ts",
    index: "packages/cli/src/index.ts",
    ...Object.fromEntries(workers),
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
    // The mark package-assets.ts reads to know it runs from this bundle, and whose (a build-time constant).
    define: { "import.meta.codeactionBundle": JSON.stringify(bundleOwner) },
    // ssh2's optional native helpers: required inside try/catch, absent unless compiled.
    external: ["cpu-features", "*.node"],
    plugins: [withoutBuildKitSessions],
    metafile: true,
    logLevel: "warning",
  });
  return [...Object.keys(result.metafile.outputs), ...copyPackageFiles(root, outdir)];
}

/**
 * The run-time files of the packages the bundle holds (all but its owner's), copied to
 * `<bundle>/packages/<name>/` in each package's own layout: `packageFile`s from the package's
 * root, `besideCode` files into `dist/`. Worker entries are the bundle's own.
 */
function copyPackageFiles(root: string, outdir: string): string[] {
  const copied: string[] = [];
  for (const [folder, places] of Object.entries(assetTables)) {
    const packageName = `@codeaction/${folder}`;
    if (packageName === bundleOwner) continue;
    for (const place of Object.values(places)) {
      const [from, to] =
        "packageFile" in place
          ? [place.packageFile, place.packageFile]
          : "besideCode" in place
            ? [`src/${place.besideCode}`, `dist/${place.besideCode}`]
            : [];
      if (!from || !to) continue;
      const target = join(outdir, "packages", packageName, to);
      cpSync(join(root, "packages", folder, from), target);
      copied.push(target);
    }
  }
  return copied;
}
