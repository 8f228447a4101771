// @codeaction/sandbox/internal: what @codeaction/core and @codeaction/cli need beyond the public API.
// NOT a public contract: it may change in any release. Loads nothing but Node's own modules.
export type { AssetPlace, CodeLayout, PackageAssets } from "./assets/package-assets.ts";
export { packageAssets } from "./assets/package-assets.ts";
// Who a process is and whether it still runs: the CLI's journal names the process that took a run.
export type { OwnerIdentity } from "./container/owner-identity.ts";
export { currentOwner, ownerLiveness } from "./container/owner-identity.ts";
// The one base of the packages' errors (SandboxError, CodeActionError, CliError): a Node-only module,
// so the CLI's start (which loads CliError) does not load the sandbox's engine code.
export { BrandedError } from "./errors/branded-error.ts";
