import type { EngineContainer } from "../engine/container-engine.ts";
import { startExec, waitForExecExit } from "../process/exec.ts";
import { captureOutput } from "../process/exec-connection.ts";
import { podmanMaskedPaths } from "./container-spec.ts";

// Podman's inspect names the capabilities it dropped rather than ALL and shows neither its `mask=`
// paths nor MaskedPaths: those flags are read from inside the started container, from PID 1 (the
// sandbox's init), before any program runs. Everything else is read back from inspect as with Docker.

/** Prints PID 1's status, then "unmasked <path>" for each path that exists and is no mount point. */
const readBackScript = [
  "cat /proc/1/status",
  `for path in ${podmanMaskedPaths.join(" ")}; do`,
  '  if [ -e "$path" ] && ! grep -q " $path " /proc/1/mountinfo; then echo "unmasked $path"; fi',
  "done",
].join("\n");

/** The problems in what the container's PID 1 reports (empty when every flag holds). */
export function findInsideProblems(output: string): string[] {
  const status = new Map(
    output
      .split("\n")
      .map((line) => /^(\w+):\s+(.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1] as string, (match[2] as string).trim()]),
  );
  const problems: string[] = [];
  for (const field of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]) {
    const value = status.get(field);
    if (value === undefined || !/^0+$/.test(value))
      problems.push(`${field} of PID 1 is ${value ?? "missing"}, not 0`);
  }
  if (status.get("NoNewPrivs") !== "1")
    problems.push(`NoNewPrivs of PID 1 is ${status.get("NoNewPrivs")}, not 1`);
  if (status.get("Seccomp") !== "2")
    problems.push(`Seccomp of PID 1 is ${status.get("Seccomp")}, not 2 (filter)`);
  const unmasked = output
    .split("\n")
    .filter((line) => line.startsWith("unmasked "))
    .map((line) => line.slice("unmasked ".length));
  if (unmasked.length > 0) problems.push(`${unmasked.join(", ")} not masked`);
  return problems;
}

/** Runs the read-back inside a started container and lists what does not hold. */
export async function readBackInside(container: EngineContainer): Promise<string[]> {
  const { exec, stream } = await startExec(container, {
    argv: ["sh", "-c", readBackScript],
    stdin: false,
    guard: false,
  });
  // Whatever a container says is capped: PID 1's status is about 1.5 kB.
  const output = captureOutput(stream, { stdout: 64 * 1024, stderr: 4096 });
  await output.ended;
  const exitCode = await waitForExecExit(exec, { timeoutMs: 30_000 });
  if (exitCode !== 0 || output.stdout.truncated) {
    return [
      `the read-back inside the container failed (exit ${exitCode}): ${output.stderr.contents().toString()}`,
    ];
  }
  return findInsideProblems(output.stdout.contents().toString());
}
