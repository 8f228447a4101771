import { describe, expect, test } from "vitest";
import type { ContainerInspectInfo, HostConfig } from "../engine/container-engine.ts";
import { bindMountsSpec, findBindMountProblems } from "./bind-mounts.ts";

// The read-back of a container's mounts accepts exactly the expected read-only private file binds.

const expected = [{ source: "/home/a/sales.csv", target: "/workspace/data/sales.csv" }];

function readBack(mounts: object[], host: Partial<HostConfig> = {}) {
  return {
    info: { Mounts: mounts } as unknown as ContainerInspectInfo,
    host: { Mounts: bindMountsSpec(expected), ...host } as HostConfig,
  };
}

const good = {
  Type: "bind",
  Source: "/home/a/sales.csv",
  Destination: "/workspace/data/sales.csv",
  RW: false,
  Propagation: "private",
};

describe("bind mounts", () => {
  test("the spec: a read-only bind of each file, propagation private", () => {
    expect(bindMountsSpec(expected)).toEqual([
      {
        Type: "bind",
        Source: "/home/a/sales.csv",
        Target: "/workspace/data/sales.csv",
        ReadOnly: true,
        BindOptions: { Propagation: "private" },
      },
    ]);
  });

  test("exactly the expected mounts pass", () => {
    const { info, host } = readBack([good]);
    expect(findBindMountProblems(info, host, expected)).toEqual([]);
    expect(findBindMountProblems({ Mounts: [] } as unknown as ContainerInspectInfo, {}, [])).toEqual([]);
  });

  test("writable, shared, a folder, another file, one more, one fewer, or a Binds entry: each a problem", () => {
    const cases: [object[], Partial<HostConfig>][] = [
      [[{ ...good, RW: true }], {}],
      [[{ ...good, Propagation: "rshared" }], {}],
      [[{ ...good, Source: "/home/a", Destination: "/workspace/data" }], {}],
      [[{ ...good, Source: "/home/a/.ssh/id_ed25519" }], {}],
      [[good, { ...good, Destination: "/workspace/data/other.csv" }], {}],
      [[], {}],
      [[good], { Binds: ["/:/host"] }],
      [[good], { Mounts: bindMountsSpec(expected).map((mount) => ({ ...mount, ReadOnly: false })) }],
    ];
    for (const [mounts, hostChange] of cases) {
      const { info, host } = readBack(mounts, hostChange);
      expect(findBindMountProblems(info, host, expected), JSON.stringify([mounts, hostChange])).not.toEqual(
        [],
      );
    }
    // No mounts expected: any mount is a problem.
    const { info, host } = readBack([good]);
    expect(findBindMountProblems(info, host, [])).not.toEqual([]);
  });
});
