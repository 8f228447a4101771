/**
 * A sandbox session's owner in a process of its own, so a test can kill it (SIGKILL: its connection
 * closes) or freeze it (SIGSTOP: its connection stays open and silent). Prints "CONTAINER <id>" once
 * the session's container runs, then waits.
 * Usage: node tests/remote/session-owner-child.ts '<engine settings JSON>' <deadline seconds>
 */
import { SandboxManager } from "@codeaction/sandbox";

const engine = JSON.parse(process.argv[2] ?? "{}") as Record<string, string>;
const deadlineSeconds = Number(process.argv[3] ?? "600");
const manager = new SandboxManager({ network: "none", engine });
await manager.ready();
const session = await manager.createSession({ deadlineSeconds });
process.stdout.write(`CONTAINER ${session.containerId}\n`);
setInterval(() => undefined, 1 << 30);
