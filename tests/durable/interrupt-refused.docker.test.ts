import { InterruptRefusedError } from "@codeaction/core";
import { describe, expect, it } from "vitest";
import {
  buildDurableAgent,
  containersLeftByThisProcess,
  durablePrograms,
  durableSandbox,
  ledgerTools,
} from "../support/durable-agent.ts";

// An approval hook may answer "interrupt" only where the run can be resumed from its state. Where it
// cannot (several samples; a result the call log kept only as a digest), invoke throws a typed error
// naming the cause and the fix, the pending call is not made, and no container is left.

async function interruptWith(options: { samples: number; lookupBytes: number }) {
  const { calls, tools } = ledgerTools(options.lookupBytes);
  const sandbox = durableSandbox();
  const reply = `\`\`\`python\n${durablePrograms.plain}\`\`\``;
  const agent = await buildDurableAgent({
    replies: Array(options.samples).fill(reply),
    sandbox,
    tools,
    samples: options.samples,
    resumeSecret: "a-resume-secret-of-32-characters",
  });
  try {
    const error = await agent.invoke("Charge Ada her balance.").then(
      (result) => result,
      (thrown: unknown) => thrown,
    );
    return { error, calls, containersLeft: await containersLeftByThisProcess() };
  } finally {
    await agent.close();
    await sandbox.close();
  }
}

describe("an interrupt the run could not be resumed from", () => {
  it("with samples: 2, invoke throws InterruptRefusedError naming samples; charge_card is not called", async () => {
    const { error, calls, containersLeft } = await interruptWith({ samples: 2, lookupBytes: 0 });
    expect(InterruptRefusedError.isInstance(error)).toBe(true);
    const refused = error as InterruptRefusedError;
    expect(refused).toMatchObject({ code: "interrupt-refused", reason: "samples" });
    expect(refused.pending).toMatchObject({ tool: "charge_card", args: { customer: "ada", amount: 42 } });
    expect(refused.message).toContain("codeAction.samples: 2");
    expect(refused.message).toContain("samples: 1");
    expect(calls.charge_card).toBe(0);
    expect(containersLeft).toBe(0);
  });

  it("after a result over the call log's 1 MiB, invoke throws InterruptRefusedError naming that call", async () => {
    const { error, calls, containersLeft } = await interruptWith({ samples: 1, lookupBytes: 1100 * 1024 });
    expect(InterruptRefusedError.isInstance(error)).toBe(true);
    const refused = error as InterruptRefusedError;
    expect(refused).toMatchObject({
      reason: "result-not-kept",
      pending: { sequence: 2, tool: "charge_card" },
    });
    expect(refused.message).toContain("call 1 (lookup) returned");
    expect(refused.message).toContain("Have lookup return less");
    expect(calls).toEqual({ lookup: 1, charge_card: 0 });
    expect(containersLeft).toBe(0);
  });
});
