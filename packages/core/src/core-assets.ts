// The files @codeaction/core reads at run time, by name (@codeaction/sandbox's package-assets.ts
// resolves them in the sources, in dist/ and in the command's bundle).
import { type AssetPlace, packageAssets } from "@codeaction/sandbox/internal";

export const coreAssetPlaces = {
  /** The bridge's container side (bridge/python-sources.ts). */
  "relay.py": { besideCode: "bridge/relay.py" },
  "relay_io.py": { besideCode: "bridge/relay_io.py" },
  "relay_channels.py": { besideCode: "bridge/relay_channels.py" },
  "relay_steps.py": { besideCode: "bridge/relay_steps.py" },
  "relay_loop.py": { besideCode: "bridge/relay_loop.py" },
  "bootstrap.py": { besideCode: "bridge/bootstrap.py" },
  "codeaction_tools.py": { besideCode: "bridge/codeaction_tools.py" },
  /** The walk of /workspace/out after a program (output/output-listing.ts). */
  "output-collector.py": { besideCode: "output/output-collector.py" },
} as const satisfies Record<string, AssetPlace>;

export const coreAssets = packageAssets({
  packageName: "@codeaction/core",
  moduleUrl: import.meta.url,
  places: coreAssetPlaces,
});
