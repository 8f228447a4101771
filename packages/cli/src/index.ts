export type { CliContext } from "./context.ts";
export { CliError } from "./errors/cli-error.ts";
export { main, run } from "./main.ts";
