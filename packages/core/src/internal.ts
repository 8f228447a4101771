// @codeaction/core/internal: what @codeaction/cli needs beyond the public API. NOT a public
// contract: it may change in any release. Applications import from "@codeaction/core".
export { defaultSandboxDescription } from "./code-action/prompt.ts";
export type { StubbedTool } from "./code-action/python-stubs.ts";
export { buildStubs, renderStubSignatures } from "./code-action/python-stubs.ts";
export type { DiscoveryPlan } from "./code-action/tool-index.ts";
export { defaultDiscoverySettings, planDiscovery } from "./code-action/tool-index.ts";
export type { ToolSearch, ToolSearchMatch } from "./code-action/tool-search.ts";
export { createToolSearch } from "./code-action/tool-search.ts";
export { type ProcessLock, takeProcessLock, withFileLock } from "./durable/file-lock.ts";
export type { ChainEnd, ChainLink } from "./durable/record-chain.ts";
export { chainEndOf, chainedLine } from "./durable/record-chain.ts";
export { verifyState } from "./durable/run-state.ts";
export type { ChainBreak, LineOfFile, Verification } from "./durable/verify-chain.ts";
export { verifyChain } from "./durable/verify-chain.ts";
export { parseServerCommand } from "./mcp/parse-server-command.ts";
export { loadModel } from "./model.ts";
export { privateFolder, writePrivateFile } from "./private-file.ts";
