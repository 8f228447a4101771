import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PackedPackage, packPackages, repositoryRoot } from "./pack-packages.ts";
import { describeRun, runCommand } from "./run-command.ts";

// Issue 43 #5: docs/observability.md's OpenTelemetry install lines, run as written in an empty npm
// project under /tmp next to the packed tarballs, resolve with the SDK's 2.x line and with its
// newest line (3.x, `@opentelemetry/sdk-trace`, whose API differs: the docs give the example's
// changed lines); one copy of @opentelemetry/api is installed (core's is a peer: the application's
// copy); and the docs' example runs there and prints its spans (ConsoleSpanExporter) with the real
// engine. The 3.x line's versions are exact in the docs, so what is tested is what is installed.

let workArea: string;
let packed: PackedPackage[];

beforeAll(async () => {
  workArea = await mkdtemp("/tmp/codeaction-otel-install-");
  packed = await packPackages(join(workArea, "tarballs"));
}, 900_000);
afterAll(async () => {
  if (workArea) await rm(workArea, { recursive: true, force: true });
});

/** The text of docs/observability.md's block of `language` after `marker`. */
async function docsBlock(marker: string, language: string): Promise<string> {
  const docs = await readFile(join(repositoryRoot, "docs/observability.md"), "utf8");
  const after = docs.split(`<!-- ${marker} -->`)[1] ?? "";
  const block = new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\``, "m").exec(after)?.[1];
  if (block === undefined)
    throw new Error(`docs/observability.md has no ${language} block after <!-- ${marker} -->`);
  return block;
}

/** The packages of the docs' install line (the sh block after `<!-- <marker> -->`). */
async function docsInstallLine(marker: string): Promise<string[]> {
  const line = (await docsBlock(marker, "sh")).split("\n").find((text) => text.startsWith("npm install "));
  if (!line) throw new Error(`docs/observability.md has no npm install line after <!-- ${marker} -->`);
  return line.split(/\s+/).slice(2);
}

/**
 * The docs' example (examples/observability.ts, which docs/observability.md shows), with the lines
 * the docs say to change for the SDK's 3.x line replaced: its SDK import and its provider.
 */
async function exampleFor3x(): Promise<string> {
  const changes = (await docsBlock("example changes: opentelemetry 3.x", "ts")).trim().split("\n");
  const importLine = changes.find((line) => line.includes('from "@opentelemetry/sdk-trace"'));
  const providerLine = changes.find((line) => line.startsWith("const provider ="));
  const example = (await readFile(join(repositoryRoot, "examples/observability.ts"), "utf8")).split("\n");
  const sdkImport = example.findIndex((line) => line.includes('from "@opentelemetry/sdk-trace-base"'));
  const provider = example.findIndex((line) => line.startsWith("const provider ="));
  if (!importLine || !providerLine || sdkImport === -1 || provider === -1) {
    throw new Error(
      "the docs' 3.x changes no longer match examples/observability.ts's SDK import and provider",
    );
  }
  example[sdkImport] = importLine;
  example[provider] = providerLine;
  return example.join("\n");
}

/**
 * Installs the tarballs (core, sandbox) and the docs' line under `marker` into a new project;
 * `api` installs that version of @opentelemetry/api instead of the line's.
 */
async function installProject(name: string, marker: string, api?: string): Promise<string> {
  const project = join(workArea, name);
  await mkdir(project, { recursive: true });
  await writeFile(
    join(project, "package.json"),
    `{ "name": "${name}", "private": true, "type": "module" }\n`,
  );
  const tarballs = packed.filter((entry) => entry.name !== "cli").map((entry) => entry.tarball);
  const install = await runCommand(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      ...tarballs,
      ...(await docsInstallLine(marker)).map((spec) =>
        api && spec.startsWith("@opentelemetry/api@") ? `@opentelemetry/api@${api}` : spec,
      ),
    ],
    { cwd: project, timeoutMs: 900_000 },
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
  return project;
}

/** Runs observability.ts in `project`; expects its span tree on stdout and the answer. */
async function expectSpans(project: string): Promise<void> {
  const run = await runCommand(process.execPath, ["observability.ts"], { cwd: project, timeoutMs: 300_000 });
  expect(run.exitCode, describeRun(run)).toBe(0);
  for (const name of ["invoke_agent codeaction", "chat scripted", "execute_program"]) {
    expect(run.stdout, describeRun(run)).toContain(`name: '${name}'`);
  }
  expect(run.stdout).toMatch(/^>>> /m);
}

/** The version of an installed package in `project`. */
async function installedVersion(project: string, name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(project, "node_modules", name, "package.json"), "utf8"));
  return manifest.version;
}

describe("the OpenTelemetry install line of docs/observability.md", () => {
  it("2.x: resolves beside the tarballs, installs one @opentelemetry/api, and the example prints its spans", async () => {
    const project = await installProject("project-2x", "install: opentelemetry");
    const core = JSON.parse(
      await readFile(join(project, "node_modules/@codeaction/core/package.json"), "utf8"),
    );
    expect(core.peerDependencies["@opentelemetry/api"]).toBe(">=1.4.0 <2");
    expect(core.dependencies["@opentelemetry/api"]).toBeUndefined();
    expect(await installedVersion(project, "@opentelemetry/sdk-trace-base")).toMatch(/^2\./);
    await copyFile(join(repositoryRoot, "examples/observability.ts"), join(project, "observability.ts"));
    await expectSpans(project);
  });

  it("the lowest API core's peer range names (1.4.0), with the 2.x line: the example prints its spans", async () => {
    const project = await installProject("project-api-1.4", "install: opentelemetry", "1.4.0");
    expect(await installedVersion(project, "@opentelemetry/api")).toBe("1.4.0");
    await copyFile(join(repositoryRoot, "examples/observability.ts"), join(project, "observability.ts"));
    await expectSpans(project);
  });

  it("3.x (@opentelemetry/sdk-trace, API 1.10): the pinned line resolves, and the example with the docs' two changed lines prints its spans", async () => {
    const project = await installProject("project-3x", "install: opentelemetry 3.x");
    expect(await installedVersion(project, "@opentelemetry/sdk-trace")).toBe("3.1.1");
    expect(await installedVersion(project, "@opentelemetry/api")).toBe("1.10.0");
    await writeFile(join(project, "observability.ts"), await exampleFor3x());
    await expectSpans(project);
  });
});
