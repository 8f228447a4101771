// @codeaction/core/stubs: the Python stubs a code-action program sees for a set of tools, and the
// search over a large catalogue, for code mode served another way (the codeaction command's MCP
// server lists them; `agent.describeTools()` renders the same text). Loads no model, no sandbox.

export type { DiscoveryPlan } from "../discovery/tool-index.ts";
export { defaultDiscoverySettings, planDiscovery } from "../discovery/tool-index.ts";
export type { ToolSearch, ToolSearchMatch } from "../discovery/tool-search.ts";
export { createToolSearch } from "../discovery/tool-search.ts";
export type { StubbedTool } from "../prompt/python-stubs.ts";
export { buildStubs, renderStubSignatures } from "../prompt/python-stubs.ts";
