export type { ConnectedServers, ConnectServersOptions, ServerSpec } from "./connect.ts";
export { mapToolResult } from "./map-tool-result.ts";
export { connectServers } from "./on-demand.ts";
export { parseServerCommand } from "./parse-server-command.ts";
export { checkServerSpecs } from "./server-spec.ts";
