/** Ends a spawned process's stdin, drains its output and waits for its exit (the unit tests' finisher). */
export function finishProcess(process: {
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  stdin: NodeJS.WritableStream;
  exit: Promise<unknown>;
}): Promise<unknown> {
  process.stdout.resume();
  process.stderr.resume();
  process.stdin.end();
  return process.exit;
}
