// Each published package's asset table (packages/sandbox/src/assets/package-assets.ts), for the
// build: build-packages.ts copies the files that live beside the code into dist/, and bundle-cli.ts
// builds one bundle entry per worker.
import { cliAssetPlaces } from "../packages/cli/src/cli-assets.ts";
import { coreAssetPlaces } from "../packages/core/src/core-assets.ts";
import type { AssetPlace } from "../packages/sandbox/src/assets/package-assets.ts";
import { sandboxAssetPlaces } from "../packages/sandbox/src/assets/sandbox-assets.ts";

export const assetTables: Record<"sandbox" | "core" | "cli", Readonly<Record<string, AssetPlace>>> = {
  sandbox: sandboxAssetPlaces,
  core: coreAssetPlaces,
  cli: cliAssetPlaces,
};
