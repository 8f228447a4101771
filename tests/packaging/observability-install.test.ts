import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PackedPackage, packPackages, repositoryRoot } from "./pack-packages.ts";
import { describeRun, runCommand } from "./run-command.ts";

// Issue 43 #5: docs/observability.md's OpenTelemetry install line, run as written in an empty npm
// project under /tmp next to the packed tarballs, resolves with the current SDK (2.x line); one
// copy of @opentelemetry/api is installed (core's is a peer: the application's copy); and the
// docs' example runs there and prints its spans (ConsoleSpanExporter) with the real engine.

let workArea: string;
let packed: PackedPackage[];

beforeAll(async () => {
  workArea = await mkdtemp("/tmp/codeaction-otel-install-");
  packed = await packPackages(join(workArea, "tarballs"));
}, 900_000);
afterAll(async () => {
  if (workArea) await rm(workArea, { recursive: true, force: true });
});

/** The packages of the docs' install line (the sh block after `<!-- install: opentelemetry -->`). */
async function docsInstallLine(): Promise<string[]> {
  const docs = await readFile(join(repositoryRoot, "docs/observability.md"), "utf8");
  const block = docs.split("<!-- install: opentelemetry -->")[1]?.split("```")[1] ?? "";
  const line = block.split("\n").find((text) => text.startsWith("npm install "));
  if (!line)
    throw new Error("docs/observability.md has no npm install line after <!-- install: opentelemetry -->");
  return line.split(/\s+/).slice(2);
}

describe("the OpenTelemetry install line of docs/observability.md", () => {
  it("resolves beside the tarballs, installs one @opentelemetry/api, and the example prints its spans", async () => {
    const project = join(workArea, "project");
    await runCommand("mkdir", ["-p", project], { cwd: workArea, timeoutMs: 10_000 });
    await writeFile(
      join(project, "package.json"),
      '{ "name": "otel-consumer", "private": true, "type": "module" }\n',
    );
    const tarballs = packed.filter((entry) => entry.name !== "cli").map((entry) => entry.tarball);
    const install = await runCommand(
      "npm",
      ["install", "--no-audit", "--no-fund", ...tarballs, ...(await docsInstallLine())],
      {
        cwd: project,
        timeoutMs: 900_000,
      },
    );
    expect(install.exitCode, describeRun(install)).toBe(0);

    // The application's API is the only one: core declares it a peer, not a dependency of its own.
    const copies = await runCommand("npm", ["ls", "@opentelemetry/api", "--all", "--parseable"], {
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(new Set(copies.stdout.trim().split("\n"))).toEqual(
      new Set([join(project, "node_modules/@opentelemetry/api")]),
    );
    const core = JSON.parse(
      await readFile(join(project, "node_modules/@codeaction/core/package.json"), "utf8"),
    );
    expect(core.peerDependencies["@opentelemetry/api"]).toBe(">=1.4.0 <2");
    expect(core.dependencies["@opentelemetry/api"]).toBeUndefined();

    await copyFile(join(repositoryRoot, "examples/observability.ts"), join(project, "observability.ts"));
    const run = await runCommand(process.execPath, ["observability.ts"], {
      cwd: project,
      timeoutMs: 300_000,
    });
    expect(run.exitCode, describeRun(run)).toBe(0);
    for (const name of ["invoke_agent codeaction", "chat scripted", "execute_program"]) {
      expect(run.stdout, describeRun(run)).toContain(`name: '${name}'`);
    }
    expect(run.stdout).toMatch(/^>>> /m);
  });
});
