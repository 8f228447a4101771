// The files @codeaction/cli reads at run time, by name (@codeaction/sandbox's package-assets.ts
// resolves them in the sources, in dist/ and in the command's bundle).
import { type AssetPlace, packageAssets } from "@codeaction/sandbox/internal";

export const cliAssetPlaces = {
  /** The version `--version` prints (main.ts). */
  "package.json": { packageFile: "package.json" },
  /** The recording that ships with the command (shipped-replay.ts). */
  "replays/first-run.json": { packageFile: "replays/first-run.json" },
  /** The desk's page, served by name (commands/desk/desk-server.ts). */
  "desk/index.html": { packageFile: "assets/desk/index.html" },
  "desk/desk.js": { packageFile: "assets/desk/desk.js" },
  "desk/desk.css": { packageFile: "assets/desk/desk.css" },
  /** The data files' scan worker thread (data-files/scan-thread.ts). */
  "scan-worker": { workerEntry: "data-files/scan-worker" },
} as const satisfies Record<string, AssetPlace>;

export const cliAssets = packageAssets({
  packageName: "@codeaction/cli",
  moduleUrl: import.meta.url,
  places: cliAssetPlaces,
});
