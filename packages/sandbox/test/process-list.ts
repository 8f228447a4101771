import type { SandboxSession } from "../src/session.ts";

/** The container stopped while the listing ran (the session replaced it): nothing of it is left running. */
export class ContainerReplaced extends Error {
  constructor(stderr: string) {
    super(`the container stopped during the listing: ${stderr}`);
  }
}

/**
 * The command lines of every process in the session's container except PID 1's chain, the kill
 * helper and this listing itself: what a command left behind.
 */
export async function leftoverProcesses(session: SandboxSession): Promise<string[]> {
  const script = [
    "import os",
    "me = os.getpid()",
    "for name in os.listdir('/proc'):",
    "    if not name.isdigit() or int(name) in (me, 1):",
    "        continue",
    "    try:",
    "        line = open(f'/proc/{name}/cmdline', 'rb').read().replace(b'\\0', b' ').decode().strip()",
    "    except OSError:",
    "        continue",
    "    if not line or line.startswith(('timeout -s KILL', 'cat', 'bash -c', '/bin/sh -c python3 -c')):",
    "        continue",
    "    if line.endswith('codeaction-kill-helper'):",
    "        continue",
    "    print(line)",
  ].join("\n");
  const result = await session.execute(`python3 -c "$SCRIPT"`, { env: { SCRIPT: script } });
  if (result.workspaceReset) throw new ContainerReplaced(result.stderr);
  if (result.exitCode !== 0) throw new Error(`listing processes failed: ${result.stderr}`);
  return result.stdout.split("\n").filter((line) => line.length > 0);
}
