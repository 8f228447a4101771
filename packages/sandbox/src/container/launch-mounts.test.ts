import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { RecordingEngine } from "../../test/recording-engine.ts";
import { parseSandboxConfig } from "../config.ts";
import { filesToPlace } from "../files/placement-path.ts";
import { buildLabels } from "./labels.ts";
import { launchForHandover } from "./launch.ts";

// A launch with files to mount, through the recording fake engine: an engine that refuses the bind
// (Docker Desktop outside its shared folders) gets a container without it, the files left to copy.
// The mounts themselves against the real engine: tests/security/mounted-data-files.test.ts.

const folder = mkdtempSync(join(tmpdir(), "codeaction-launch-mounts-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("a launch with files to mount", () => {
  test("an engine that refuses the bind: a second container without it, nothing mounted", async () => {
    const path = join(folder, "sales.csv");
    writeFileSync(path, "a,b\n1,2\n", { mode: 0o644 });
    const engine = new RecordingEngine();
    const refusal = Object.assign(
      new Error('invalid mount config for type "bind": bind source path does not exist'),
      {
        statusCode: 400,
      },
    );
    engine.failNext("create", refusal);
    const deadline = new Date(Date.now() + 600_000);
    const launched = await launchForHandover(engine, parseSandboxConfig({ user: "1000:1000" }), {
      labels: buildLabels({ managerId: "launch-mounts", deadline }),
      deadline,
      imageEnv: engine.image.env,
      mountFiles: filesToPlace([path]),
    });
    expect(launched.mounted).toBeUndefined();
    // The refused create, then one without the bind.
    expect(engine.calls.filter((call) => call.startsWith("create"))).toHaveLength(2);
    const info = await engine.getContainer(launched.containerId).inspect();
    expect(info.HostConfig.Mounts).toEqual([]);
  });

  test("an image that cannot list the mounts (busybox's find): a second container without them", async () => {
    const path = join(folder, "listed.csv");
    writeFileSync(path, "a\n1\n", { mode: 0o644 });
    const engine = new RecordingEngine();
    engine.scriptCommand("find", { exitCode: 1 });
    const deadline = new Date(Date.now() + 600_000);
    const launched = await launchForHandover(engine, parseSandboxConfig({ user: "1000:1000" }), {
      labels: buildLabels({ managerId: "launch-mounts", deadline }),
      deadline,
      imageEnv: engine.image.env,
      mountFiles: filesToPlace([path]),
    });
    expect(launched.mounted).toBeUndefined();
    const creates = engine.calls.filter((call) => call.startsWith("create"));
    expect(creates).toHaveLength(2);
    // The first container, with the mount, was removed before the second was made.
    expect(engine.calls).toContain(`remove ${creates[0]!.split(" ")[1]}`);
    const info = await engine.getContainer(launched.containerId).inspect();
    expect(info.HostConfig.Mounts).toEqual([]);
  });

  test("a listing that shows another file is not an unverifiable one: the launch fails", async () => {
    const path = join(folder, "mismatch.csv");
    writeFileSync(path, "a\n1\n", { mode: 0o644 });
    const engine = new RecordingEngine();
    engine.scriptCommand("find", { stdout: "f\t1\t2\t99\t1.0\t1.0\tmismatch.csv\n", exitCode: 0 });
    const deadline = new Date(Date.now() + 600_000);
    const launching = launchForHandover(engine, parseSandboxConfig({ user: "1000:1000" }), {
      labels: buildLabels({ managerId: "launch-mounts", deadline }),
      deadline,
      imageEnv: engine.image.env,
      mountFiles: filesToPlace([path]),
    });
    await expect(launching).rejects.toThrow("is not the file that was checked");
    expect(engine.calls.filter((call) => call.startsWith("create"))).toHaveLength(1);
  });

  test("any other failure is not taken for a refused bind: the launch fails", async () => {
    const path = join(folder, "other.csv");
    writeFileSync(path, "a\n1\n", { mode: 0o644 });
    const engine = new RecordingEngine();
    engine.failNext("create", Object.assign(new Error("no space left on device"), { statusCode: 500 }));
    const deadline = new Date(Date.now() + 600_000);
    const launching = launchForHandover(engine, parseSandboxConfig({ user: "1000:1000" }), {
      labels: buildLabels({ managerId: "launch-mounts", deadline }),
      deadline,
      imageEnv: engine.image.env,
      mountFiles: filesToPlace([path]),
    });
    await expect(launching).rejects.toThrow("no space left on device");
  });
});
