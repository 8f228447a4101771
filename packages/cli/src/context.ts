/** What a command runs with: its streams and environment (a test or an embedding program can pass its own). */
export type CliContext = {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  cwd: string;
};
