export {
  type ConnectedServers,
  type ConnectServersOptions,
  connectServers,
  type ServerSpec,
} from "./connect.ts";
export { mapToolResult } from "./map-tool-result.ts";
export { parseServerCommand } from "./parse-server-command.ts";
export { checkServerSpecs } from "./server-spec.ts";
