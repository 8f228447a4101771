// @codeaction/sandbox/internal: what @codeaction/core and @codeaction/cli need beyond the public API.
// NOT a public contract: it may change in any release. Loads nothing but Node's own modules.
export type { AssetPlace, CodeLayout, PackageAssets } from "./assets/package-assets.ts";
export { packageAssets } from "./assets/package-assets.ts";
