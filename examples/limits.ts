// The seed's limits test: a sandbox with 256 MB and a 5-second time limit, and two programs that
// break them. No model. Run: node examples/limits.ts
import { SandboxManager } from "@codeaction/sandbox";

const greedy = `python3 -c 'blocks = [bytearray(50_000_000) for _ in range(20)]; print("got 1 GB")'`;
const slow = `python3 -c 'while True: pass'`;

const manager = new SandboxManager({ network: "none", memoryLimit: "256M", cpuLimit: 1, timeout: 5 });
try {
  const session = await manager.createSession();

  // The kernel reclaims for a while before it kills; on a busy machine that can pass 5 s, so the
  // memory case gets its own time limit and an out-of-memory kill is never read as a timeout.
  const memory = await session.execute(greedy, { timeout: 120 });
  console.log(
    `memory: exit ${memory.exitCode}, out of memory ${memory.oomKilled}, output ${JSON.stringify(memory.stdout + memory.stderr)}`,
  );

  const time = await session.execute(slow);
  console.log(`time:   exit ${time.exitCode}, timed out ${time.timedOut}, ${JSON.stringify(time.stderr)}`);
} finally {
  await manager.close();
}
