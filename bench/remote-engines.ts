import type { SandboxConfigInput } from "@codeaction/sandbox";
import { startSshFront, startTlsFront } from "../tests/support/engine-fronts.ts";
import { scriptedAgent, timedTurn } from "./agents.ts";
import { callLoopProgram, noopTool } from "./tool-call-cost.ts";
import { overheadProgram } from "./turn-overhead.ts";

export type RemoteEngineSamples = Record<string, { turn: number[]; call: number[] }>;

/**
 * Turn overhead and bridged-call cost through the unix socket, TLS and SSH, side by side in one run:
 * the local engine behind the remote tests' own fronts (stunnel with client certificates, sshd with
 * a key), so the difference is the transport alone. Each endpoint gets two agents with the default
 * warm container: one answering `print("RESULT: 1")` (turn overhead), one calling a no-op tool
 * `calls` times in one program (per-call cost measured inside the program). Rounds interleave the
 * endpoints, their order rotating.
 */
export async function measureRemoteEngines(options: {
  rounds: number;
  calls: number;
  onProgress?: (message: string) => void;
}): Promise<RemoteEngineSamples> {
  const [tls, ssh] = await Promise.all([startTlsFront(), startSshFront()]);
  const engines: Array<{ name: string; sandbox: SandboxConfigInput }> = [
    { name: "unix socket", sandbox: {} },
    { name: "TLS", sandbox: { engine: { host: tls.host, tlsCertPath: tls.goodCertPath } } },
    {
      name: "SSH",
      sandbox: {
        engine: { host: ssh.host, sshIdentityFile: ssh.identityFile, sshKnownHostsFile: ssh.knownHostsFile },
      },
    },
  ];
  const replies = options.rounds + 1;
  const agents = await Promise.all(
    engines.map(async (engine) => ({
      name: engine.name,
      turn: await scriptedAgent({ program: overheadProgram, replies, sandbox: engine.sandbox }),
      calls: await scriptedAgent({
        program: callLoopProgram(options.calls),
        replies,
        sandbox: engine.sandbox,
        extra: { extraTools: [noopTool], codeAction: { maxToolCalls: options.calls + 10 } },
      }),
    })),
  );
  const samples: RemoteEngineSamples = Object.fromEntries(
    engines.map((engine) => [engine.name, { turn: [], call: [] }]),
  );
  try {
    for (let round = 0; round <= options.rounds; round += 1) {
      const order = agents.map((_, index) => agents[(index + round) % agents.length]!);
      for (const agent of order) {
        const turn = await timedTurn(agent.turn, "1");
        const calls = await agent.calls.invoke({ messages: [{ role: "user", content: "Call noop." }] });
        if (calls.status !== "answered")
          throw new Error(`the ${agent.name} call loop failed: ${calls.status}`);
        // Round 0 is untimed: first connections, the warm containers' first use.
        if (round === 0) continue;
        samples[agent.name]!.turn.push(turn.ms);
        samples[agent.name]!.call.push(...(JSON.parse(calls.answer) as number[]));
      }
      options.onProgress?.(`remote engines round ${round}/${options.rounds}`);
    }
  } finally {
    await Promise.allSettled(agents.flatMap((agent) => [agent.turn.close(), agent.calls.close()]));
    tls.stop();
    ssh.stop();
  }
  return samples;
}
