// The files @codeaction/sandbox reads at run time, by name (package-assets.ts resolves them in the
// sources, in dist/ and in the command's bundle).
import { type AssetPlace, packageAssets } from "./package-assets.ts";

export const sandboxAssetPlaces = {
  /** The sandbox image's recipe (image.ts): the Dockerfile path and the script both paths run. */
  "images/python/Dockerfile": { packageFile: "images/python/Dockerfile" },
  "images/python/additions.sh": { packageFile: "images/python/additions.sh" },
  /** The egress proxy image's recipe (network/proxy-image.ts). */
  "images/proxy/additions.sh": { packageFile: "images/proxy/additions.sh" },
  /** The prelaunch's worker thread (prelaunch/prelaunch.ts). */
  "prelaunch-worker": { workerEntry: "prelaunch/prelaunch-worker" },
} as const satisfies Record<string, AssetPlace>;

export const sandboxAssets = packageAssets({
  packageName: "@codeaction/sandbox",
  moduleUrl: import.meta.url,
  places: sandboxAssetPlaces,
});
