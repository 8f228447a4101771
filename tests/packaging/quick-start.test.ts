import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PackedPackage, packPackages } from "./pack-packages.ts";
import { quickStartSteps, readmeSnippet } from "./quick-start-steps.ts";
import { describeRun, runCommand } from "./run-command.ts";

// docs/quick-start.md followed as written by someone with only the npm packages: an empty folder,
// `npm init -y`, then every step of its npm section in order, with no key. The one liberty: our
// packages are not on the registry yet, so `npm install @codeaction/<name>` installs the packed
// tarball of that name (and core's own @codeaction/sandbox beside it).

const typescriptCompiler = join(import.meta.dirname, "../../node_modules/typescript/bin/tsc");
let workArea: string;
let packed: PackedPackage[];
let project: string;

beforeAll(async () => {
  workArea = await mkdtemp("/tmp/codeaction-quick-start-");
  packed = await packPackages(join(workArea, "tarballs"));
  project = join(workArea, "my-agent");
  await mkdir(project);
}, 900_000);
afterAll(async () => {
  if (workArea) await rm(workArea, { recursive: true, force: true });
});

/** An `npm install` line with each @codeaction package as its tarball. */
function withTarballs(words: string[]): string[] {
  const tarball = (name: string) => packed.find((entry) => `@codeaction/${entry.name}` === name)!.tarball;
  const replaced = words.map((word) => (word.startsWith("@codeaction/") ? tarball(word) : word));
  if (words.includes("@codeaction/core") && !words.includes("@codeaction/sandbox")) {
    replaced.push(tarball("@codeaction/sandbox"));
  }
  return replaced;
}

describe("docs/quick-start.md, followed in an empty project with only the packages", () => {
  it("every step runs, without a key, and prints what the page says", async () => {
    const steps = await quickStartSteps();
    expect(steps.map((step) => (step.kind === "file" ? `file ${step.name}` : step.line))).toContain(
      "npm init -y",
    );
    for (const step of steps) {
      if (step.kind === "file") {
        await writeFile(join(project, step.name), step.content);
        continue;
      }
      const [command, ...args] = step.line.split(/\s+(?=(?:[^"]*"[^"]*")*[^"]*$)/);
      const unquoted = args.map((word) => word.replace(/^"(.*)"$/, "$1"));
      const words = command === "npm" && unquoted[0] === "install" ? withTarballs(unquoted) : unquoted;
      const run = await runCommand(command!, words, { cwd: project, timeoutMs: 900_000 });
      expect(run.exitCode, `${step.line}\n${describeRun(run)}`).toBe(0);
      if (step.expectedOutput !== undefined) expect(run.stdout.trim(), step.line).toBe(step.expectedOutput);
    }
    const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(manifest.type).toBe("module");
  });

  it("the quick start's agent.ts and the README's snippet type-check as written (strict, nodenext)", async () => {
    await writeFile(join(project, "readme.ts"), await readmeSnippet());
    const types = await runCommand("npm", ["install", "--save-dev", "--no-audit", "@types/node@^22"], {
      cwd: project,
      timeoutMs: 600_000,
    });
    expect(types.exitCode, describeRun(types)).toBe(0);
    const tsconfig = {
      compilerOptions: {
        target: "es2023",
        lib: ["es2023", "esnext.disposable"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ["node"],
      },
      files: ["agent.ts", "readme.ts"],
    };
    await writeFile(join(project, "tsconfig.json"), JSON.stringify(tsconfig));
    const run = await runCommand(process.execPath, [typescriptCompiler, "-p", "tsconfig.json"], {
      cwd: project,
      timeoutMs: 600_000,
    });
    expect(run.exitCode, describeRun(run)).toBe(0);
  });
});
