import Dockerode from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { removeNetwork } from "../docker-operations.ts";
import { buildLabels, labelKeys } from "../labels.ts";
import { sweepNetworks } from "./sweep-networks.ts";

const docker = new Dockerode();
const made: string[] = [];

async function makeNetwork(name: string, labels: Record<string, string>): Promise<string> {
  const network = await docker.createNetwork({
    Name: name,
    Internal: true,
    Labels: labels,
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
    const later = new Date(Date.now() + 3600_000);
    const live = buildLabels({ managerId: `sweep-live-${process.pid}`, deadline: later });
    // A pid that cannot exist (above pid_max) stands for an owner that died.
    const dead = {
      ...buildLabels({ managerId: `sweep-dead-${process.pid}`, deadline: later }),
      [labelKeys.ownerPid]: "99999999",
    };
    const expired = buildLabels({
      managerId: `sweep-expired-${process.pid}`,
      deadline: new Date(Date.now() - 1000),
    });
    const liveId = await makeNetwork(`codeaction-sweep-live-${process.pid}`, live);
    const deadId = await makeNetwork(`codeaction-sweep-dead-${process.pid}`, dead);
    const expiredId = await makeNetwork(`codeaction-sweep-expired-${process.pid}`, expired);
    const swept = await sweepNetworks(docker, { ownManagerId: `sweep-other-${process.pid}` });
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
