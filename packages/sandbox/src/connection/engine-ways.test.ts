import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "../config.ts";
import { buildContainerSpec, findSpecProblems } from "../container/container-spec.ts";
import { dockerDialect } from "../container/engine-dialect.ts";
import { allocateIdentity } from "../container/user-ids.ts";
import type { ContainerInspectInfo } from "../engine/container-engine.ts";

// Podman's ways are values (engine-dialect.ts `waysOf`): what Podman is allowed to report must not
// loosen Docker's read-back. container-spec.test.ts covers Podman's side.

const { config } = allocateIdentity(parseSandboxConfig({}));

/** What Docker reports for a spec that took: the spec itself. */
function inspected(): ContainerInspectInfo {
  const spec = buildContainerSpec(config, { labels: {}, deadlineSeconds: 60, dialect: dockerDialect });
  return {
    Id: "c1",
    Config: { User: spec.User, Hostname: spec.Hostname, Env: spec.Env, Image: spec.Image },
    HostConfig: { ...spec.HostConfig },
    Mounts: [],
    NetworkSettings: { Networks: {} },
  } as unknown as ContainerInspectInfo;
}

describe("Docker's read-back keeps none of Podman's allowances", () => {
  it("reads back clean as Docker reports it", () => {
    expect(findSpecProblems(inspected(), config, { dialect: dockerDialect })).toEqual([]);
  });

  it("refuses an IPC namespace others may join, Podman's tmpfs report and Podman's environment", () => {
    const info = inspected();
    const host = info.HostConfig as Record<string, unknown>;
    host.IpcMode = "shareable";
    const tmpfs = host.Tmpfs as Record<string, string>;
    tmpfs["/tmp"] = `${tmpfs["/tmp"]},rprivate,tmpcopyup`;
    info.Config.Env = [...(info.Config.Env ?? []), "container=podman"];
    expect(findSpecProblems(info, config, { dialect: dockerDialect })).toEqual([
      expect.stringMatching(/IpcMode is shareable/),
      expect.stringMatching(/tmpfs \/tmp/),
      expect.stringMatching(/unexpected environment variables: container/),
    ]);
  });
});
