export type { CliContext } from "./context.ts";
export type { CliErrorCode } from "./errors/cli-error.ts";
export { CliError } from "./errors/cli-error.ts";
export { main, run } from "./main.ts";
