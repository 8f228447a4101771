import Dockerode from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { buildLabels, labelKeys } from "../container/labels.ts";
import type { ContainerEngine, ListOptions } from "../engine/container-engine.ts";
import { removeNetwork } from "../engine/engine-operations.ts";
import { sweepNetworks } from "./sweep-networks.ts";

const docker = new Dockerode();
const made: string[] = [];

// Every manager's ready() sweeps, in this suite's other files and in any other process on the
// machine, and a network whose owner is dead is fair game to all of them. So this test's networks
// do not carry the `managed` label the sweeps list by: they carry a label of this test's own, and the
// sweep under test reaches them through the real engine with its listing narrowed to that label
// (after the test checks that the sweep asked for managed networks only).
const testLabel = `codeaction.sweep-test=${process.pid}-${Date.now()}`;
const [testLabelKey = "", testLabelValue = ""] = testLabel.split("=");

function unmanaged(labels: Record<string, string>): Record<string, string> {
  const { [labelKeys.managed]: _managed, ...rest } = labels;
  return { ...rest, [testLabelKey]: testLabelValue };
}

async function makeNetwork(name: string, labels: Record<string, string>): Promise<string> {
  const network = await docker.createNetwork({
    Name: name,
    Internal: true,
    Labels: unmanaged(labels),
    CheckDuplicate: true,
  });
  made.push(network.id);
  return network.id;
}

describe("sweepNetworks", () => {
  afterAll(async () => {
    await Promise.allSettled(made.map((id) => removeNetwork(docker, id)));
  });

  it("removes a network whose owner is gone or whose deadline passed, and keeps a live manager's", async () => {
    const now = Date.now();
    const sweptAt = new Date(now + 2 * 3600_000);
    const live = buildLabels({
      managerId: `sweep-live-${process.pid}`,
      deadline: new Date(now + 3 * 3600_000),
    });
    // A pid that cannot exist (above pid_max) stands for an owner that died.
    const dead = {
      ...buildLabels({ managerId: `sweep-dead-${process.pid}`, deadline: new Date(now + 3 * 3600_000) }),
      [labelKeys.ownerPid]: "99999999",
    };
    // Its deadline passes at the sweep's `now`, two hours ahead.
    const expired = buildLabels({
      managerId: `sweep-expired-${process.pid}`,
      deadline: new Date(now + 3600_000),
    });
    const liveId = await makeNetwork(`codeaction-sweep-live-${process.pid}`, live);
    const deadId = await makeNetwork(`codeaction-sweep-dead-${process.pid}`, dead);
    const expiredId = await makeNetwork(`codeaction-sweep-expired-${process.pid}`, expired);

    const asked: ListOptions[] = [];
    const engine: ContainerEngine = Object.assign(Object.create(docker) as ContainerEngine, {
      listNetworks: async (options: ListOptions) => {
        asked.push(options);
        return docker.listNetworks({ filters: { label: [testLabel] } });
      },
    });
    const swept = await sweepNetworks(engine, { ownManagerId: `sweep-other-${process.pid}`, now: sweptAt });
    expect(asked).toEqual([{ filters: { label: [`${labelKeys.managed}=true`] } }]);
    const sweptIds = swept.map((network) => network.networkId);
    expect(sweptIds).toContain(deadId);
    expect(sweptIds).toContain(expiredId);
    expect(sweptIds).not.toContain(liveId);
    const remaining = (await docker.listNetworks()).map((network) => network.Id);
    expect(remaining).toContain(liveId);
    expect(remaining).not.toContain(deadId);
    expect(remaining).not.toContain(expiredId);
  });
});
