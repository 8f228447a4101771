import { Writable } from "node:stream";
import type { CliContext } from "../src/context.ts";
import { main } from "../src/main.ts";
import { type CliRun, commandEnvironment, repositoryRoot } from "./run-cli.ts";

/** A stream that keeps what is written to it, as text. */
function keptText(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

/**
 * Runs the command line in this process through `main()`, the function the bin calls, with its own
 * streams, environment and folder (the repository root unless `cwd` is given): for what needs no
 * process of its own. What is about the process (the bin's start-up and exit code, its own stdin,
 * Node's own import of a user's module, paths relative to the process's folder) stays with runCli.
 */
export async function runMain(
  args: string[],
  options: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    /** How the command waits before retrying a model call (CliContext.wait); a timer when not given. */
    wait?: CliContext["wait"];
  } = {},
): Promise<Omit<CliRun, "pid">> {
  const stdout = keptText();
  const stderr = keptText();
  const env = commandEnvironment(options.env);
  const exitCode = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env,
    cwd: options.cwd ?? repositoryRoot,
    ...(options.wait ? { wait: options.wait } : {}),
  });
  return { exitCode, stdout: stdout.text(), stderr: stderr.text() };
}
