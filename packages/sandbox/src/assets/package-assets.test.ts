import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetMissingError } from "../errors/asset-missing-error.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { type AssetPlace, layoutOf, packageAssets } from "./package-assets.ts";

// The three layouts, as files on disk: a repository's package (its TypeScript sources), the same
// package installed (its dist/), and the command's bundle inside an installed CLI package, which
// reads its own package's files from the installed CLI, the other packages' from its own copies
// (`packages/<name>/`), and has its worker entries beside its chunks.

let area: string;
const repository = () => join(area, "repository/packages/fake-core");
const installed = (name: string) => join(area, "project/node_modules/@fake", name);

async function put(path: string, text = ""): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

async function manifest(folder: string, name: string): Promise<void> {
  await put(
    join(folder, "package.json"),
    JSON.stringify({ name, exports: { "./package.json": "./package.json" } }),
  );
}

const places = {
  "relay.py": { besideCode: "bridge/relay.py" },
  "images/recipe.sh": { packageFile: "images/recipe.sh" },
  "scan-worker": { workerEntry: "data-files/scan-worker" },
} as const satisfies Record<string, AssetPlace>;

beforeAll(async () => {
  area = await mkdtemp(join(tmpdir(), "codeaction-assets-"));
  await manifest(repository(), "@fake/core");
  await put(join(repository(), "src/bridge/relay.py"));
  await put(join(repository(), "src/data-files/scan-worker.ts"));
  await put(join(repository(), "images/recipe.sh"));
  await manifest(installed("core"), "@fake/core");
  await put(join(installed("core"), "dist/bridge/relay.py"));
  await put(join(installed("core"), "dist/data-files/scan-worker.js"));
  await put(join(installed("core"), "images/recipe.sh"));
  await manifest(installed("cli"), "@fake/cli");
  await put(join(installed("cli"), "dist/bundle/scan-worker.js"));
  await put(join(installed("cli"), "assets/page.html"));
  await put(join(installed("cli"), "dist/bundle/packages/@fake/core/dist/bridge/relay.py"));
  await put(join(installed("cli"), "dist/bundle/packages/@fake/core/images/recipe.sh"));
});
afterAll(async () => {
  if (area) await rm(area, { recursive: true, force: true });
});

describe("layoutOf", () => {
  it("tells the sources, compiled code and the bundle apart", () => {
    expect(layoutOf("file:///repository/packages/core/src/core-assets.ts", false)).toBe("sources");
    expect(layoutOf("file:///project/node_modules/@codeaction/core/dist/core-assets.js", false)).toBe(
      "compiled",
    );
    expect(layoutOf("file:///project/node_modules/@codeaction/cli/dist/bundle/chunk-X.js", true)).toBe(
      "bundle",
    );
    // Vitest runs the sources: no bundle mark here.
    expect(layoutOf(import.meta.url)).toBe("sources");
  });
});

describe("packageAssets", () => {
  it("finds each kind of asset in the repository's sources", () => {
    const moduleUrl = pathToFileURL(join(repository(), "src/core-assets.ts")).href;
    const assets = packageAssets({ packageName: "@fake/core", moduleUrl, places });
    expect(assets.path("relay.py")).toBe(join(repository(), "src/bridge/relay.py"));
    expect(assets.path("images/recipe.sh")).toBe(join(repository(), "images/recipe.sh"));
    expect(assets.path("scan-worker")).toBe(join(repository(), "src/data-files/scan-worker.ts"));
  });

  it("finds each kind of asset in an installed package's dist/", () => {
    const moduleUrl = pathToFileURL(join(installed("core"), "dist/core-assets.js")).href;
    const assets = packageAssets({ packageName: "@fake/core", moduleUrl, places });
    expect(assets.path("relay.py")).toBe(join(installed("core"), "dist/bridge/relay.py"));
    expect(assets.path("images/recipe.sh")).toBe(join(installed("core"), "images/recipe.sh"));
    expect(assets.url("scan-worker")).toEqual(
      pathToFileURL(join(installed("core"), "dist/data-files/scan-worker.js")),
    );
  });

  it("in the bundle: another package's files from the bundle's copies, workers from the bundle's own entries", () => {
    const moduleUrl = pathToFileURL(join(installed("cli"), "dist/bundle/chunk-ABC.js")).href;
    const bundle = { moduleUrl, places, layout: "bundle", bundleOwner: "@fake/cli" } as const;
    const assets = packageAssets({ packageName: "@fake/core", ...bundle });
    const copies = join(installed("cli"), "dist/bundle/packages/@fake/core");
    expect(assets.path("relay.py")).toBe(join(copies, "dist/bridge/relay.py"));
    expect(assets.path("images/recipe.sh")).toBe(join(copies, "images/recipe.sh"));
    expect(assets.path("scan-worker")).toBe(join(installed("cli"), "dist/bundle/scan-worker.js"));
    // The package that ships the bundle reads its own files from where it is installed.
    const own = { "assets/page.html": { packageFile: "assets/page.html" } } as const;
    const cli = packageAssets({ ...bundle, packageName: "@fake/cli", places: own });
    expect(cli.path("assets/page.html")).toBe(join(installed("cli"), "assets/page.html"));
  });

  it("a bundle without its copy of another package's file names the bundle's build and the CLI package", () => {
    const moduleUrl = pathToFileURL(join(installed("cli"), "dist/bundle/chunk-ABC.js")).href;
    const missing = { "absent.py": { besideCode: "bridge/absent.py" } } as const;
    const assets = packageAssets({
      packageName: "@fake/core",
      moduleUrl,
      places: missing,
      layout: "bundle",
      bundleOwner: "@fake/cli",
    });
    const message = (catchError(() => assets.path("absent.py")) as Error).message;
    expect(message).toContain(
      `"absent.py" at ${join(installed("cli"), "dist/bundle/packages/@fake/core/dist/bridge/absent.py")}`,
    );
    expect(message).toContain("copies the files of the packages it holds");
    expect(message).toContain("reinstall it (npm install @fake/cli)");
  });

  it("a broken mapping is an AssetMissingError naming the asset, where it looked and the build step", () => {
    const moduleUrl = pathToFileURL(join(installed("core"), "dist/core-assets.js")).href;
    const broken = { "relay.py": { besideCode: "bridge/relay.pyx" } } as const;
    const assets = packageAssets({ packageName: "@fake/core", moduleUrl, places: broken });
    const error = catchError(() => assets.path("relay.py"));
    expect(AssetMissingError.isInstance(error)).toBe(true);
    expect(SandboxError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "asset-missing",
      packageName: "@fake/core",
      asset: "relay.py",
      path: join(installed("core"), "dist/bridge/relay.pyx"),
    });
    expect((error as Error).message).toBe(
      `@fake/core cannot find its file "relay.py" at ${join(installed("core"), "dist/bridge/relay.pyx")} ` +
        "(no such file; the code runs from the package's compiled dist/). In the repository, run `pnpm build` " +
        "(scripts/build-packages.ts puts the run-time files in dist/); installed, the copy of @fake/core is " +
        "incomplete: reinstall it (npm install @fake/core).",
    );
  });

  it("a bundle without a worker's entry names the bundle's build and the CLI package", () => {
    const moduleUrl = pathToFileURL(join(installed("cli"), "dist/bundle/chunk-ABC.js")).href;
    const worker = { "prelaunch-worker": { workerEntry: "prelaunch/prelaunch-worker" } } as const;
    const assets = packageAssets({
      packageName: "@fake/sandbox",
      moduleUrl,
      places: worker,
      layout: "bundle",
      bundleOwner: "@codeaction/cli",
    });
    const message = (catchError(() => assets.url("prelaunch-worker")) as Error).message;
    expect(message).toContain(
      `"prelaunch-worker" at ${join(installed("cli"), "dist/bundle/prelaunch-worker.js")}`,
    );
    expect(message).toContain("the codeaction command's bundle (dist/bundle/)");
    expect(message).toContain("scripts/bundle-cli.ts builds the bundle's entries");
    expect(message).toContain("reinstall it (npm install @codeaction/cli)");
  });

  it("a missing file in the sources says to restore it or correct the table", () => {
    const moduleUrl = pathToFileURL(join(repository(), "src/core-assets.ts")).href;
    const broken = { "relay.py": { besideCode: "relay.py" } } as const;
    const message = (
      catchError(() =>
        packageAssets({ packageName: "@fake/core", moduleUrl, places: broken }).path("relay.py"),
      ) as Error
    ).message;
    expect(message).toContain(
      `at ${join(repository(), "src/relay.py")} (no such file; the code runs from the repository's TypeScript sources)`,
    );
    expect(message).toContain("Restore the file in the repository");
    expect(message).toContain("correct its place in @fake/core's asset table");
  });

  it("a package that cannot be resolved is an AssetMissingError that says where from", () => {
    const moduleUrl = pathToFileURL(join(installed("cli"), "dist/bundle/chunk-ABC.js")).href;
    const assets = packageAssets({
      packageName: "@fake/absent",
      moduleUrl,
      places,
      layout: "bundle",
      bundleOwner: "@fake/absent",
    });
    const error = catchError(() => assets.path("relay.py"));
    expect(AssetMissingError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      `@fake/absent cannot find its file "relay.py" at @fake/absent/package.json (the package itself is not found from ${join(installed("cli"), "dist/bundle/chunk-ABC.js")})`,
    );
    expect((error as Error).cause).toMatchObject({ code: "MODULE_NOT_FOUND" });
  });

  it("an asset name outside the table is refused by name", () => {
    const moduleUrl = pathToFileURL(join(repository(), "src/core-assets.ts")).href;
    const assets = packageAssets({ packageName: "@fake/core", moduleUrl, places });
    expect(() => assets.path("relay.pyc" as never)).toThrow(
      '@fake/core has no asset named "relay.pyc" in its asset table',
    );
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}
