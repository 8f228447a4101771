import { SandboxManager } from "@codeaction/sandbox";
import { runProgram } from "../../packages/core/src/code-action/run-program.ts";
for (const backend of ["docker", "gvisor"] as const) {
  const manager = new SandboxManager({ backend });
  await manager.ready();
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const session = await manager.createSession({ deadlineSeconds: 120 });
    const t1 = performance.now();
    const run = await runProgram({ session, program: "import os\nprint('RESULT:', sorted(os.listdir('/proc/self/fd')))", stubsSource: "", tools: [], runId: "t", execTimeout: 10, maxToolCalls: 5 });
    const t2 = performance.now();
    await session.destroy();
    const t3 = performance.now();
    console.log(backend, run.status, run.result, Math.round(t1 - t0), Math.round(t2 - t1), Math.round(t3 - t2));
  }
  await manager.cleanupAll();
}
