/** What a command runs with: its streams and environment (a test or an embedding program can pass its own). */
export type CliContext = {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * How a command spends the wait before it retries a failed model call (1 s, 2 s, 4 s, ...): a
   * timer when not given. A test passes one that records the wait and returns at once.
   */
  wait?: (milliseconds: number, signal: AbortSignal | undefined) => Promise<void>;
};
