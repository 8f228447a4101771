// How our packages find the files they read at run time (their assets): the bridge's Python files,
// the image recipes, the desk's page, the shipped recording, package.json, and the entry modules of
// the worker threads. Each package names its assets in one table (sandbox-assets.ts,
// core/src/core-assets.ts, cli/src/cli-assets.ts); this module resolves a name in each of the three
// layouts the code runs in:
//   sources   the repository's TypeScript (src/*.ts, run by Node or Vitest);
//   compiled  a built or installed package's dist/ (tsc's output, with the .py files that
//             scripts/build-packages.ts copies beside it);
//   bundle    the `codeaction` command's esbuild bundle (packages/cli/dist/bundle/, built by
//             scripts/bundle-cli.ts), which holds the code of all three packages and their
//             dependencies in a few chunks, a worker entry of its own per worker thread, and a copy
//             of the other packages' run-time files under `packages/<name>/` (the CLI installs no
//             @codeaction/core nor @codeaction/sandbox). esbuild's `define` marks it with the name
//             of the package that ships it (`import.meta.codeactionBundle`); nothing else in the
//             bundle is rewritten.
// A package itself is found as Node finds it: `<name>/package.json` resolved from the module that
// asks (a package resolves its own name); in the bundle, only the package that ships it is (its
// package.json, the desk's page), the others are the bundle's copies. A file that is not there is an
// AssetMissingError naming the fix.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { AssetMissingError } from "../errors/asset-missing-error.ts";

/** Where the running code comes from (see the top of this file). */
export type CodeLayout = "sources" | "compiled" | "bundle";

/** Where one asset lives, relative to its package. */
export type AssetPlace =
  /** The same path from the package's root in every layout (`images/python/Dockerfile`, `package.json`). */
  | { packageFile: string }
  /** Beside the code: `src/<path>` in the sources, `dist/<path>` compiled and for the bundle. */
  | { besideCode: string }
  /**
   * A worker thread's entry module, without extension: `src/<path>.ts`, `dist/<path>.js`; in the
   * bundle, the bundle's own entry `<basename>.js` (scripts/bundle-cli.ts builds one per worker).
   */
  | { workerEntry: string };

/** A package's assets by name. Each call checks that the file is there. */
export type PackageAssets<Name extends string> = {
  /** The asset's absolute path; an AssetMissingError when it is absent. */
  path(name: Name): string;
  /** The same as a file: URL (for `new Worker`). */
  url(name: Name): URL;
};

/**
 * In the command's bundle only, the name of the package that ships it (`@codeaction/cli`):
 * esbuild's `define` in scripts/bundle-cli.ts sets it. Undefined elsewhere.
 */
const bundleOwner = (import.meta as ImportMeta & { codeactionBundle?: string }).codeactionBundle;
const inBundle = typeof bundleOwner === "string";

/** The layout of a module: the bundle's mark, else TypeScript sources or compiled JavaScript. */
export function layoutOf(moduleUrl: string, bundled: boolean = inBundle): CodeLayout {
  if (bundled) return "bundle";
  return moduleUrl.endsWith(".ts") ? "sources" : "compiled";
}

/**
 * The assets of one package, from its table. `moduleUrl` is the `import.meta.url` of the module
 * that holds the table (in the bundle, the chunk it was bundled into).
 */
export function packageAssets<Name extends string>(options: {
  packageName: string;
  moduleUrl: string;
  places: Readonly<Record<Name, AssetPlace>>;
  layout?: CodeLayout;
  /** In the bundle, the package that ships it (its own files are the installed package's). */
  bundleOwner?: string | undefined;
}): PackageAssets<Name> {
  const layout = options.layout ?? layoutOf(options.moduleUrl);
  const owner = options.bundleOwner ?? bundleOwner;
  const path = (name: Name): string => {
    const place = options.places[name];
    if (!place) throw new Error(`${options.packageName} has no asset named "${name}" in its asset table`);
    return locateAsset({ ...options, layout, name, place, bundleOwner: owner });
  };
  return { path, url: (name) => pathToFileURL(path(name)) };
}

type AssetRequest = {
  packageName: string;
  moduleUrl: string;
  layout: CodeLayout;
  name: string;
  place: AssetPlace;
  bundleOwner?: string | undefined;
};

/** The asset's path in its layout, checked to exist. */
export function locateAsset(request: AssetRequest): string {
  const { place, layout } = request;
  if ("workerEntry" in place && layout === "bundle") {
    const entry = join(dirname(fileURLToPath(request.moduleUrl)), `${basename(place.workerEntry)}.js`);
    return checked(request, entry);
  }
  const root = packageRoot(request);
  const code = layout === "sources" ? "src" : "dist";
  if ("packageFile" in place) return checked(request, join(root, place.packageFile));
  if ("besideCode" in place) return checked(request, join(root, code, place.besideCode));
  return checked(request, join(root, code, `${place.workerEntry}${layout === "sources" ? ".ts" : ".js"}`));
}

/** `<bundle>/packages/<name>`: the bundle's copy of a package it holds (scripts/bundle-cli.ts). */
function bundledPackageRoot(moduleUrl: string, packageName: string): string {
  return join(dirname(fileURLToPath(moduleUrl)), "packages", packageName);
}

function packageRoot(request: AssetRequest): string {
  if (request.layout === "bundle" && request.packageName !== request.bundleOwner) {
    return bundledPackageRoot(request.moduleUrl, request.packageName);
  }
  const manifest = `${request.packageName}/package.json`;
  try {
    return dirname(createRequire(request.moduleUrl).resolve(manifest));
  } catch (error) {
    const from = fileURLToPath(request.moduleUrl);
    throw new AssetMissingError({
      packageName: request.packageName,
      asset: request.name,
      path: manifest,
      reason: `the package itself is not found from ${from}`,
      fix: fixFor(request),
      cause: error,
    });
  }
}

function checked(request: AssetRequest, path: string): string {
  if (existsSync(path)) return path;
  throw new AssetMissingError({
    packageName: request.packageName,
    asset: request.name,
    path,
    reason: `no such file; the code runs from ${describeLayout(request.layout)}`,
    fix: fixFor(request),
  });
}

function describeLayout(layout: CodeLayout): string {
  if (layout === "sources") return "the repository's TypeScript sources";
  if (layout === "compiled") return "the package's compiled dist/";
  return "the codeaction command's bundle (dist/bundle/)";
}

function fixFor(request: AssetRequest): string {
  if (request.layout === "sources") {
    return `Restore the file in the repository (git status shows whether it moved), or correct its place in ${request.packageName}'s asset table.`;
  }
  const bundleFile =
    request.layout === "bundle" &&
    ("workerEntry" in request.place || request.packageName !== request.bundleOwner);
  const owner = bundleFile ? (request.bundleOwner ?? "@codeaction/cli") : request.packageName;
  const step = bundleFile
    ? "scripts/bundle-cli.ts builds the bundle's entries and copies the files of the packages it holds"
    : "scripts/build-packages.ts puts the run-time files in dist/";
  return `In the repository, run \`pnpm build\` (${step}); installed, the copy of ${owner} is incomplete: reinstall it (npm install ${owner}).`;
}
