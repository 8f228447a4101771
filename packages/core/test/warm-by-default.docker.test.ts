import { connectDocker } from "@codeaction/sandbox";
import { beforeAll, describe, expect, it } from "vitest";
import { buildAgent, createCodeActionSandbox } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";

/** The label the sandbox puts on every container it creates (packages/sandbox/src/container/labels.ts; not exported). */
const ownerPidLabel = "codeaction.owner-pid";

import { programReply } from "./helpers.ts";

// An agent built with no sandbox options is warm: one container (its relay already running) waits
// from the moment the agent is built, serves the next turn, is replaced, sleeps after an idle
// period and is gone after shutdown. Observed through the engine, not through our own bookkeeping.

type Docker = Awaited<ReturnType<typeof connectDocker>>["docker"];
type ContainerSummary = Awaited<ReturnType<Docker["listContainers"]>>[number];

let docker: Docker;

beforeAll(async () => {
  ({ docker } = await connectDocker());
});

/** The sandbox containers this test process owns (each file runs in its own process). */
function ownContainers(): Promise<ContainerSummary[]> {
  return docker.listContainers({ all: true, filters: { label: [`${ownerPidLabel}=${process.pid}`] } });
}

/** Polls until `check` holds for this process's containers; fails with what it saw last. */
async function waitForContainers(
  description: string,
  check: (containers: ContainerSummary[]) => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<ContainerSummary[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const containers = await ownContainers();
    if (await check(containers)) return containers;
    if (Date.now() > deadline) {
      throw new Error(`${description}: still ${JSON.stringify(containers.map((c) => [c.Id, c.State]))}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Execs started in a container: the kill helper, then the warm relay. */
async function execCount(containerId: string): Promise<number> {
  const info = (await docker.getContainer(containerId).inspect()) as { ExecIDs?: string[] | null };
  return info.ExecIDs?.length ?? 0;
}

const ask = { messages: [{ role: "user" as const, content: "What is one?" }] };
const onePerTurn = (turns: number) =>
  new ScriptedChatModel(Array.from({ length: turns }, () => programReply('print("RESULT: 1")')));

describe("code-action is warm by default (real engine)", () => {
  it("keeps one started container with its relay waiting from build on; a turn uses it and it is refilled; shutdown leaves none", async () => {
    const agent = await buildAgent({ model: onePerTurn(2), pattern: "code-action" });
    try {
      const [warm] = await waitForContainers(
        "one running warm container with its relay started",
        async (containers) =>
          containers.length === 1 &&
          containers[0]!.State === "running" &&
          (await execCount(containers[0]!.Id)) >= 2,
      );
      const result = await agent.invoke(ask);
      expect(result.answer).toBe("1");
      // The warm container ran that turn (one run per container: it is removed), and a new one waits.
      const [refill] = await waitForContainers(
        "the used container removed and one new warm container",
        (containers) =>
          containers.length === 1 && containers[0]!.Id !== warm!.Id && containers[0]!.State === "running",
      );
      expect(refill!.Id).not.toBe(warm!.Id);
      expect((await agent.invoke(ask)).answer).toBe("1");
    } finally {
      await agent.close();
    }
    expect(await ownContainers()).toEqual([]);
  });

  it("after poolIdleSeconds without a turn the warm container is removed; the next turn still runs and warms the pool again", async () => {
    const agent = await buildAgent({
      model: onePerTurn(1),
      pattern: "code-action",
      sandbox: { poolIdleSeconds: 2 },
    });
    try {
      // First the fill's container, then none once the idle period passed.
      await waitForContainers("the warm container", (containers) => containers.length === 1);
      await waitForContainers(
        "the warm container removed after the idle period",
        (containers) => containers.length === 0,
      );
      expect((await agent.invoke(ask)).answer).toBe("1");
      await waitForContainers("a warm container again after the turn", (containers) =>
        containers.some((container) => container.State === "running"),
      );
      await waitForContainers(
        "removed again after the next idle period",
        (containers) => containers.length === 0,
      );
    } finally {
      await agent.close();
    }
    expect(await ownContainers()).toEqual([]);
  });

  it("pool: 0 turns the warm pool off: a turn starts its own container and nothing waits afterwards", async () => {
    const agent = await buildAgent({ model: onePerTurn(1), pattern: "code-action", sandbox: { pool: 0 } });
    try {
      expect((await agent.invoke(ask)).answer).toBe("1");
      // The turn's container is removed off the critical path; after that nothing is started again.
      await waitForContainers(
        "no container once the turn's is removed",
        (containers) => containers.length === 0,
      );
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await ownContainers()).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it("agents built on one createCodeActionSandbox share its warm pool; shutting an agent down leaves the manager working until its owner cleans it up", async () => {
    const sandbox = createCodeActionSandbox({ pool: 1 });
    const label = `codeaction.manager-id=${sandbox.managerId}`;
    const managerContainers = () => docker.listContainers({ all: true, filters: { label: [label] } });
    try {
      const first = await buildAgent({ model: onePerTurn(1), pattern: "code-action", sandbox });
      const second = await buildAgent({ model: onePerTurn(1), pattern: "code-action", sandbox });
      // One pool for both agents: one warm container, not one per agent.
      await waitForContainers("one warm container for two agents", (containers) => containers.length === 1);
      expect((await managerContainers()).length).toBe(1);
      expect((await first.invoke(ask)).answer).toBe("1");
      await first.shutdown();
      // The manager is the caller's: the first agent's shutdown did not close it.
      expect((await second.invoke(ask)).answer).toBe("1");
      await second.shutdown();
      await waitForContainers("the refill of the shared pool", (containers) =>
        containers.some((container) => container.State === "running"),
      );
      expect(sandbox.poolStatus().live).toBeGreaterThanOrEqual(1);
    } finally {
      await sandbox.close();
    }
    expect(await ownContainers()).toEqual([]);
  });
});
