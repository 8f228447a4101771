import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAnthropicFixture, startOpenAIFixture } from "../../packages/core/src/testing/index.ts";
import { createCliProject, createConsumer, type Installer, runInstalledCli } from "./consumer-project.ts";
import { type PackedPackage, packPackages, publishedPackages, repositoryRoot } from "./pack-packages.ts";
import { describeRun, runCommand } from "./run-command.ts";

// What a user gets: the packages built, packed with `pnpm pack`, installed from the tarballs into a
// new project under /tmp (outside the workspace) by npm and by pnpm, and used there against the
// real Docker engine: an ESM program with a real container turn, a strict type-check of the shipped
// declarations, the `codeaction` bin (doctor, ask --replay, image build), and require() from CommonJS.

const typescriptCompiler = join(import.meta.dirname, "../../node_modules/typescript/bin/tsc");
const seedTotals = [
  { region: "North America", revenue: 108664 },
  { region: "LATAM", revenue: 81328 },
  { region: "EMEA", revenue: 77689 },
  { region: "APAC", revenue: 65023 },
];
const question =
  "What was the revenue per region in Q3 2026 (July to September)? Revenue is quantity times unit price. Sort from highest to lowest.";

let workArea: string;
let packed: PackedPackage[];

beforeAll(async () => {
  workArea = await mkdtemp("/tmp/codeaction-packaging-");
  packed = await packPackages(join(workArea, "tarballs"));
}, 900_000);
afterAll(async () => {
  if (workArea) await rm(workArea, { recursive: true, force: true });
});

describe("the tarballs", () => {
  it("hold the compiled code, declarations, maps and run assets, and no sources, tests or fixtures", async () => {
    const listing = async (entry: PackedPackage) => {
      const run = await runCommand("tar", ["tzf", entry.tarball], { cwd: workArea, timeoutMs: 60_000 });
      return run.stdout.trim().split("\n");
    };
    for (const entry of packed) {
      const files = await listing(entry);
      expect(files, entry.name).toContain("package/LICENSE");
      expect(files, entry.name).toContain("package/README.md");
      // The CLI's code is its bundle (below): its tsc JavaScript is not shipped, its declarations are.
      const code = entry.name === "cli" ? "package/dist/bundle/index.js" : "package/dist/index.js";
      expect(files, entry.name).toContain(code);
      expect(files, entry.name).toContain("package/dist/index.d.ts");
      if (entry.name !== "cli") expect(files, entry.name).toContain("package/dist/index.js.map");
      expect(files, entry.name).toContain("package/dist/index.d.ts.map");
      const strays = files.filter((file) =>
        /(\.test\.|test-helper|\/fixtures\/|egress-fixture|\/src\/|\/test\/|tsbuildinfo)/.test(file),
      );
      expect(strays, entry.name).toEqual([]);
    }
    const sandbox = await listing(packed.find((entry) => entry.name === "sandbox")!);
    expect(sandbox).toEqual(
      expect.arrayContaining(["package/images/python/Dockerfile", "package/images/proxy/additions.sh"]),
    );
    const core = await listing(packed.find((entry) => entry.name === "core")!);
    expect(core).toEqual(
      expect.arrayContaining([
        "package/dist/bridge/relay.py",
        "package/dist/bridge/bootstrap.py",
        "package/dist/bridge/codeaction_tools.py",
      ]),
    );
    const cli = await listing(packed.find((entry) => entry.name === "cli")!);
    expect(cli).toContain("package/dist/bin.js");
    // The command's bundle (scripts/bundle-cli.ts): the command's and the library's entries, its
    // worker threads' entries, and its copies of core's and the sandbox's run-time files.
    expect(cli).toEqual(
      expect.arrayContaining([
        "package/dist/bundle/main.js",
        "package/dist/bundle/index.js",
        "package/dist/bundle/prelaunch-worker.js",
        "package/dist/bundle/scan-worker.js",
        "package/dist/bundle/packages/@codeaction/core/dist/bridge/relay.py",
        "package/dist/bundle/packages/@codeaction/sandbox/images/python/Dockerfile",
      ]),
    );
    // One copy of the code: no tsc JavaScript beside the bundle but the bin that loads it.
    const unbundled = cli.filter((file) => /^package\/dist\/(?!bundle\/).*\.js(\.map)?$/.test(file));
    expect(unbundled).toEqual(["package/dist/bin.js"]);
  });
});

describe("@codeaction/cli installed alone with npm (the command's install)", () => {
  let project: string;

  beforeAll(async () => {
    project = join(workArea, "consumer-cli-alone");
    await createCliProject(project, packed);
  }, 600_000);

  it("installs one package, the tarball: no dependency, no install script", async () => {
    const manifest = JSON.parse(
      await readFile(join(project, "node_modules/@codeaction/cli/package.json"), "utf8"),
    ) as { dependencies?: object; scripts?: Record<string, string> };
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => /install/.test(name))).toEqual([]);
    const top = await readdir(join(project, "node_modules"));
    expect(top.filter((name) => !name.startsWith("."))).toEqual(["@codeaction"]);
    expect(await readdir(join(project, "node_modules/@codeaction"))).toEqual(["cli"]);
  });

  it("the command runs from its bundle alone: --version, image build, ask --replay in a container", async () => {
    const version = await runInstalledCli(project, "npm", ["--version"]);
    expect(version.stdout.trim(), describeRun(version)).toBe("0.1.0");
    // The image recipe and the bridge's Python files are the bundle's copies (no @codeaction/sandbox
    // nor @codeaction/core is installed).
    const image = await runInstalledCli(project, "npm", ["image", "build"]);
    expect(image.stdout, describeRun(image)).toMatch(
      /^codeaction\/python:3\.11 is current \(recipe [0-9a-f]{16}\)/,
    );
    const args = ["ask", "--csv", "orders.csv", "--replay", "q3-revenue.json", "--no-journal", question];
    const run = await runInstalledCli(project, "npm", args);
    expect(run.exitCode, describeRun(run)).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(seedTotals);
  });

  it('import "@codeaction/cli" works as a library from the bundle', async () => {
    const script =
      'const cli = await import("@codeaction/cli"); console.log(Object.keys(cli).sort().join(","), new cli.CliError("x", { code: "usage" }).exitCode);';
    const run = await runCommand(process.execPath, ["--input-type=module", "-e", script], {
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(run.stdout.trim(), describeRun(run)).toBe("CliError,main,run 1");
  });
});

describe("the packed READMEs' links", () => {
  it("each resolves from the registry page: absolute, into this repository's main branch, to a page that exists", async () => {
    for (const entry of packed) {
      const read = async (file: string) =>
        (
          await runCommand("tar", ["xzf", entry.tarball, "-O", `package/${file}`], {
            cwd: workArea,
            timeoutMs: 60_000,
          })
        ).stdout;
      const manifest = JSON.parse(await read("package.json")) as { repository: { url: string } };
      const repository = manifest.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
      const readme = await read("README.md");
      const targets = [...readme.matchAll(/\]\(([^)\s]+)\)|(https?:\/\/[^\s)>]+)/g)].map(
        (found) => found[1] ?? found[2] ?? "",
      );
      // A page named but not linked (`docs/cli.md`) does not open from the registry page.
      expect(readme, entry.name).not.toMatch(/`docs\/[\w-]+\.md`/);
      expect(targets.filter((target) => target.endsWith(".md")).length, entry.name).toBeGreaterThan(0);
      for (const target of targets) {
        const inRepository = new RegExp(
          `^${repository.replaceAll(".", "\\.")}/(?:blob|tree)/main/(.+)$`,
        ).exec(target);
        expect(inRepository, `${entry.name}: ${target}`).not.toBeNull();
        await expect(stat(join(repositoryRoot, inRepository?.[1] ?? "")), target).resolves.toBeDefined();
      }
    }
  });
});

describe("pnpm publish --dry-run", () => {
  it.each(publishedPackages)(
    "is clean for @codeaction/%s: no warning but the login one, and the tarball it would publish",
    async (name) => {
      const run = await runCommand("pnpm", ["publish", "--dry-run", "--no-git-checks"], {
        cwd: join(repositoryRoot, "packages", name),
        timeoutMs: 180_000,
      });
      expect(run.exitCode, describeRun(run)).toBe(0);
      const output = `${run.stdout}\n${run.stderr}`;
      expect(output).toMatch(new RegExp(`^\\+ @codeaction/${name}@\\d+\\.\\d+\\.\\d+`, "m"));
      // Not logged in is expected of a dry run on a test machine, and so is npm's note on the
      // npm_config_verify_deps_before_run that `pnpm vitest` sets for this process; any other
      // warning is a fault of the package.
      const expected = /requires you to be logged in|Unknown env config "verify-deps-before-run"/;
      const warnings = output
        .split("\n")
        .filter((line) => /\b(warn|WARN|ERR)\b/.test(line) && !expected.test(line));
      expect(warnings.join("\n")).toBe("");
      expect(output).toMatch(/npm notice .*dist\/(bundle\/)?index\.js\b/);
      expect(output).not.toMatch(/npm notice .*(\.test\.|\/src\/)/);
    },
  );
});

describe.each<Installer>(["npm", "pnpm"])(
  "installed with %s into a project outside the workspace",
  (installer) => {
    let project: string;

    beforeAll(async () => {
      project = join(workArea, `consumer-${installer}`);
      await createConsumer(project, installer, packed);
    }, 900_000);

    it("an ESM program builds an agent with its own tool() and runs a turn in a real container that calls it", async () => {
      const run = await runCommand(process.execPath, ["agent.mjs"], { cwd: project, timeoutMs: 300_000 });
      expect(run.exitCode, describeRun(run)).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ answer: "42", status: "answered", calls: ["multiply:ok"] });
    });

    it("a strict nodenext TypeScript file type-checks against the shipped declarations (skipLibCheck off)", async () => {
      const run = await runCommand(process.execPath, [typescriptCompiler, "-p", "tsconfig.json"], {
        cwd: project,
        timeoutMs: 600_000,
      });
      expect(run.exitCode, describeRun(run)).toBe(0);
    });

    it("code mode over MCP from @codeaction/core/mcp-server type-checks against the shipped declarations (skipLibCheck off, DOM's lib for the MCP SDK's)", async () => {
      const run = await runCommand(process.execPath, [typescriptCompiler, "-p", "tsconfig.code-mode.json"], {
        cwd: project,
        timeoutMs: 600_000,
      });
      expect(run.exitCode, describeRun(run)).toBe(0);
    });

    it("codeaction doctor checks the engine, the image and a sandbox from the installed package", async () => {
      const run = await runInstalledCli(project, installer, ["doctor"]);
      expect(run.exitCode, describeRun(run)).toBe(0);
      expect(run.stdout).toMatch(/Image +codeaction\/python:3\.11 present, built from the current recipe/);
      expect(run.stdout).toContain("code-action can run here.");
    });

    it("codeaction ask --csv --replay prints the seed's four totals", async () => {
      const args = ["ask", "--csv", "orders.csv", "--replay", "q3-revenue.json", "--no-journal", question];
      const run = await runInstalledCli(project, installer, args);
      expect(run.exitCode, describeRun(run)).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(seedTotals);
    });

    it("codeaction ask --debug from the installed bundle: both worker threads ran (the scan, the prelaunch)", async () => {
      const args = [
        "ask",
        "--csv",
        "orders.csv",
        "--replay",
        "q3-revenue.json",
        "--no-journal",
        "--debug",
        question,
      ];
      const run = await runInstalledCli(project, installer, args);
      expect(run.exitCode, describeRun(run)).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(seedTotals);
      // A worker path broken in the bundle falls back quietly: "this thread", and the manager's own
      // container ("prelaunched container not used"). The --debug lines say which ran.
      expect(run.stderr).toContain('"scannedIn":"worker"');
      expect(run.stderr).toContain("engine checks: the prelaunch's, same settings");
      expect(run.stderr).toContain("files placed before the turn (a prelaunch's)");
      expect(run.stderr).not.toContain("prelaunched container not used");
      // Both ran from the bundle's own entries (packages/sandbox/src/assets/package-assets.ts), not
      // from the packages' compiled dist/ nor the sources.
      expect(run.stderr).toMatch(/"workerEntry":"[^"]*\/@codeaction\/cli\/dist\/bundle\/scan-worker\.js"/);
      expect(run.stderr).toMatch(
        /"workerEntry":"[^"]*\/@codeaction\/cli\/dist\/bundle\/prelaunch-worker\.js"/,
      );
    });

    it("codeaction ask --model anthropic:... drives the project's own @langchain/anthropic over Anthropic's wire format", async () => {
      // The command's LangChain is bundled; the provider package and its @langchain/core are the
      // project's: the two copies meet in this turn.
      const fixture = await startAnthropicFixture([
        [{ type: "text", text: "```python\nprint('RESULT: 42')\n```" }],
      ]);
      try {
        const args = ["ask", "--model", "anthropic:claude-sonnet-4-5", "--no-journal", "What is 6 times 7?"];
        const env = { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: fixture.baseURL };
        const run = await runInstalledCli(project, installer, args, env);
        expect(run.exitCode, describeRun(run)).toBe(0);
        expect(run.stdout.trim()).toBe("42");
        expect(run.stderr).toContain("model: anthropic:claude-sonnet-4-5 (live)");
        expect(fixture.requests).toHaveLength(1);
        expect(fixture.requests[0]).toMatchObject({
          path: "/v1/messages",
          model: "claude-sonnet-4-5",
          apiKey: "sk-ant-test",
        });
      } finally {
        await fixture.close();
      }
    });

    it("codeaction ask against a model that accepts the connection and never answers: ends after the timeout and the retries, saying so plainly", async () => {
      // OpenAI's wire format; every request is read and never answered.
      const fixture = await startOpenAIFixture({ replies: [], silent: {} });
      try {
        const args = ["ask", "--model-timeout", "2", "--no-journal", "What is 6 times 7?"];
        const env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fixture.baseURL };
        const run = await runInstalledCli(project, installer, args, env);
        // It ends by itself (not killed by the runner's bound), with the default retries' 3 calls.
        expect(run.exitCode, describeRun(run)).toBe(1);
        expect(fixture.requests).toHaveLength(3);
        expect(run.stderr).toContain("the model did not answer in time; retry 1 of 2");
        expect(run.stderr).toContain(
          `The model at ${fixture.baseURL} did not answer within 2 s, tried 3 times (--retries 2).`,
        );
        expect(run.stderr).not.toMatch(/undici|withRetry|Request timed out/);
      } finally {
        await fixture.close();
      }
    });

    it("codeaction run (an MCP tool author's command) runs a program against the CSV's tool", async () => {
      await writeFile(join(project, "count.py"), 'rows = load_orders()\nprint("RESULT:", len(rows))\n');
      const run = await runInstalledCli(project, installer, ["run", "count.py", "--csv", "orders.csv"]);
      expect(run.exitCode, describeRun(run)).toBe(0);
      expect(run.stdout.trim()).toBe("RESULT: 500");
    });

    it("codeaction desk serves its page from the installed package's assets/desk", async () => {
      const bin = join(project, "node_modules/.bin/codeaction");
      const desk = spawn(bin, ["desk", "--csv", "orders.csv", "--replay", "q3-revenue.json"], {
        cwd: project,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      desk.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
      try {
        const address = await new Promise<URL>((resolve, reject) => {
          desk.stdout.setEncoding("utf8").on("data", (chunk: string) => {
            output += chunk;
            const found = /codeaction desk: (http\S+)/.exec(output);
            if (found?.[1]) resolve(new URL(found[1]));
          });
          desk.once("exit", (code) => reject(new Error(`codeaction desk exited with ${code}: ${output}`)));
        });
        const authorization = `Bearer ${address.searchParams.get("token")}`;
        const shipped = join(project, "node_modules/@codeaction/cli/assets/desk");
        for (const [path, file] of [
          ["/", "index.html"],
          ["/desk.js", "desk.js"],
          ["/desk.css", "desk.css"],
        ] as const) {
          const response = await fetch(new URL(path, address.origin), { headers: { authorization } });
          expect(response.status, `${path} ${output}`).toBe(200);
          // The page is the shipped file with this page's token written into its one meta tag.
          const pageToken = /<meta name="codeaction-page" content="([A-Za-z0-9_-]+)">/;
          const served = await response.text();
          if (file === "index.html") expect(served).toMatch(pageToken);
          expect(served.replace(pageToken, '<meta name="codeaction-page" content="">')).toBe(
            await readFile(join(shipped, file), "utf8"),
          );
        }
      } finally {
        if (desk.exitCode === null && desk.signalCode === null) {
          const exited = new Promise((resolve) => desk.once("exit", resolve));
          desk.kill("SIGTERM");
          await exited;
        }
      }
    });

    it("codeaction --version reads the installed package's version", async () => {
      const run = await runInstalledCli(project, installer, ["--version"]);
      expect(run.exitCode, describeRun(run)).toBe(0);
      const manifest = JSON.parse(
        await readFile(join(project, "node_modules/@codeaction/cli/package.json"), "utf8"),
      );
      expect(run.stdout.trim()).toBe(manifest.version);
    });

    it("codeaction image build finds the shipped recipe and reuses the current image", async () => {
      const run = await runInstalledCli(project, installer, ["image", "build"]);
      expect(run.exitCode, describeRun(run)).toBe(0);
      expect(run.stdout).toMatch(
        /^codeaction\/python:3\.11 is current \(recipe [0-9a-f]{16}\); nothing to build/,
      );
    });

    it("require() from CommonJS works, or says the package is ESM and how to import it", async () => {
      // Both sides, whatever this Node's default (require(esm) is on from 22.12): Node's own flag
      // chooses which one the same file meets.
      const outcomes: string[] = [];
      for (const flag of ["--experimental-require-module", "--no-experimental-require-module"]) {
        const run = await runCommand(process.execPath, [flag, "require.cjs"], {
          cwd: project,
          timeoutMs: 60_000,
        });
        expect(run.exitCode, describeRun(run)).toBe(0);
        outcomes.push(run.stdout.trim());
      }
      expect(outcomes[0]).toBe("required: buildAgent is a function");
      expect(outcomes[1]).toMatch(/^refused: ERR_REQUIRE_ESM: .*ES Module.*import\(/s);
    });
  },
);
