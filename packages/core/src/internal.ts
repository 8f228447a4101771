// @codeaction/core/internal: what @codeaction/cli needs beyond the public API. NOT a public
// contract: it may change in any release. Applications import from "@codeaction/core".

export type { DiscoveryPlan } from "./discovery/tool-index.ts";
export { defaultDiscoverySettings, planDiscovery } from "./discovery/tool-index.ts";
export type { ToolSearch, ToolSearchMatch } from "./discovery/tool-search.ts";
export { createToolSearch } from "./discovery/tool-search.ts";
export { type ProcessLock, takeProcessLock, withFileLock } from "./durable/file-lock.ts";
export type { ChainEnd, ChainLink } from "./durable/record-chain.ts";
export { chainEndOf, chainedLine } from "./durable/record-chain.ts";
export { verifyState } from "./durable/run-state.ts";
export type { ChainBreak, LineOfFile, Verification } from "./durable/verify-chain.ts";
export { verifyChain } from "./durable/verify-chain.ts";
export { parseServerCommand } from "./mcp/parse-server-command.ts";
export { loadModel } from "./model/model.ts";
export { privateFolder, writePrivateFile } from "./private-file.ts";
export { defaultSandboxDescription } from "./prompt/prompt.ts";
export type { StubbedTool } from "./prompt/python-stubs.ts";
export { buildStubs, renderStubSignatures } from "./prompt/python-stubs.ts";
