import { Writable } from "node:stream";
import { main } from "../src/main.ts";
import { type CliRun, commandEnvironment } from "./run-cli.ts";

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
 * streams, environment and folder: for what needs no Node start-up of its own (argument parsing and
 * usage errors). What users get as a process stays with runCli.
 */
export async function runMain(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<Omit<CliRun, "pid">> {
  const stdout = keptText();
  const stderr = keptText();
  const env = commandEnvironment(options.env);
  const exitCode = await main(args, { stdout: stdout.stream, stderr: stderr.stream, env, cwd: options.cwd });
  return { exitCode, stdout: stdout.text(), stderr: stderr.text() };
}
