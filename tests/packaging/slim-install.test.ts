import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsumer, runInstalledCli } from "./consumer-project.ts";
import { packPackages } from "./pack-packages.ts";
import { type CommandRun, describeRun, runCommand } from "./run-command.ts";

// docs/api.md's smaller install, followed as written: dockerode's BuildKit dependencies (@grpc/grpc-js,
// @grpc/proto-loader, protobufjs) overridden by an empty package, and `npm install --omit=optional`
// (no cpu-features). The packed tarballs installed into a project outside the workspace, then used
// against the real Docker engine, both through the library (which loads dockerode's own session
// module) and through the `codeaction` bin (its bundle).

let workArea: string;
let project: string;
let install: CommandRun;

beforeAll(async () => {
  workArea = await mkdtemp("/tmp/codeaction-slim-install-");
  const packed = await packPackages(join(workArea, "tarballs"));
  project = join(workArea, "consumer-slim");
  install = await createConsumer(project, "npm", packed, { slim: true });
}, 900_000);
afterAll(async () => {
  if (workArea) await rm(workArea, { recursive: true, force: true });
});

/** The installed packages whose manifest has an install-time script, by name. */
async function packagesWithInstallScripts(modules: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(modules, { recursive: true })) {
    if (!entry.endsWith("package.json")) continue;
    const folder = entry.slice(0, -"/package.json".length);
    // A package's own manifest only: node_modules/<name> or node_modules/@scope/<name>, at any depth.
    if (!/(^|\/node_modules\/)(@[^/]+\/)?[^/@][^/]*$/.test(folder)) continue;
    const manifest = JSON.parse(await readFile(join(modules, entry), "utf8")) as {
      name?: string;
      scripts?: Record<string, string>;
    };
    const scripts = manifest.scripts ?? {};
    if (scripts.preinstall || scripts.install || scripts.postinstall) found.push(manifest.name ?? folder);
  }
  return found.sort();
}

describe("the smaller npm install (docs/api.md): BuildKit dependencies overridden, --omit=optional", () => {
  it("leaves ssh2 as the only install script, a valid tree, and a library turn and the bin that both run", async () => {
    const modules = join(project, "node_modules");
    expect(await packagesWithInstallScripts(modules)).toEqual(["ssh2"]);
    expect(install.stderr).not.toMatch(/protobufjs@|cpu-features@/);
    const stand = async (name: string) =>
      (JSON.parse(await readFile(join(modules, name, "package.json"), "utf8")) as { name: string }).name;
    expect(await Promise.all(["@grpc/grpc-js", "@grpc/proto-loader", "protobufjs"].map(stand))).toEqual([
      "no-buildkit",
      "no-buildkit",
      "no-buildkit",
    ]);
    await expect(readdir(join(modules, "cpu-features"))).rejects.toMatchObject({ code: "ENOENT" });
    const listing = await runCommand("npm", ["ls", "--all"], { cwd: project, timeoutMs: 120_000 });
    expect(listing.exitCode, describeRun(listing)).toBe(0);

    // The library: @codeaction/sandbox loads dockerode, whose session module requires the stand-ins.
    const turn = await runCommand(process.execPath, ["agent.mjs"], { cwd: project, timeoutMs: 300_000 });
    expect(turn.exitCode, describeRun(turn)).toBe(0);
    expect(JSON.parse(turn.stdout)).toEqual({ answer: "42", status: "answered", calls: ["multiply:ok"] });

    // The bin.
    await writeFile(join(project, "count.py"), 'rows = load_orders()\nprint("RESULT:", len(rows))\n');
    const run = await runInstalledCli(project, "npm", ["run", "count.py", "--csv", "orders.csv"]);
    expect(run.exitCode, describeRun(run)).toBe(0);
    expect(run.stdout.trim()).toBe("RESULT: 500");

    // ssh2 (DOCKER_HOST=ssh:// engines) loads and makes a client without its optional cpu-features.
    const ssh = await runCommand(
      process.execPath,
      ["-e", 'const { Client } = require("ssh2"); new Client(); console.log("ssh2 ready")'],
      { cwd: project, timeoutMs: 60_000 },
    );
    expect(ssh.stdout.trim(), describeRun(ssh)).toBe("ssh2 ready");
  });
});
