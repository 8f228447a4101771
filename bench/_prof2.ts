import { SandboxManager } from "@codeaction/sandbox";
import { runProgram } from "../packages/core/src/code-action/run-program.ts";
import { renderStubsModule } from "../packages/core/src/code-action/python-stubs.ts";
const manager = new SandboxManager({});
await manager.ready();
const ms = (t: number) => Math.round(performance.now() - t);
for (let i = 0; i < 4; i++) {
  let t = performance.now();
  const s = await manager.createSession();
  const create = ms(t);
  t = performance.now();
  const r1 = await s.execute("true");
  const execTrue = ms(t);
  t = performance.now();
  const p = s.spawn(["python3", "-I", "-c", "pass"]);
  p.stdin.end(); p.stdout.resume(); p.stderr.resume();
  await p.started; const spawnStarted = ms(t);
  await p.exit; const spawnPy = ms(t);
  t = performance.now();
  const run = await runProgram({ session: s, program: 'print("RESULT: 1")', stubsSource: renderStubsModule([]), tools: [], runId: "x", execTimeout: 30, maxToolCalls: 10 });
  const rp = ms(t);
  t = performance.now();
  await s.inspect(); const insp = ms(t);
  t = performance.now();
  await s.destroy(); const destroy = ms(t);
  console.log({ create, execTrue, execTrueDur: r1.durationMs, spawnStarted, spawnPy, runProgram: rp, runMs: Math.round(run.runMs), status: run.status, insp, destroy });
}
await manager.cleanupAll();
