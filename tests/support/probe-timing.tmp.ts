import { SandboxManager } from "@codeaction/sandbox";
import { runProgram } from "../../packages/core/src/code-action/run-program.ts";
for (const backend of [process.argv[2] as "docker"]) {
  const manager = new SandboxManager({ backend });
  await manager.ready();
  for (let i = 0; i < Number(process.argv[3]); i++) {
    const session = await manager.createSession({ deadlineSeconds: 120 });
    const run = await runProgram({ session, program: "print('RESULT: 1')", stubsSource: "", tools: [], runId: "t", execTimeout: 10, maxToolCalls: 5 });
    await session.destroy();
  }
  await manager.cleanupAll();
}
setTimeout(() => {
  for (const h of (process as any)._getActiveHandles()) console.log(h.constructor.name, h.remoteAddress ?? "", h._host ?? "", (h as any).readable, h.destroyed, h._httpMessage?.path);
}, 3000).unref();
