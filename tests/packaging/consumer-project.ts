import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PackedPackage } from "./pack-packages.ts";
import { repositoryRoot } from "./pack-packages.ts";
import { type CommandRun, describeRun, runCommand } from "./run-command.ts";

export type Installer = "npm" | "pnpm";

/**
 * What a user installs beside our packages: their own LangChain and zod, Node's types, and a model
 * provider's package (the `codeaction` command loads it from the project, beside its own bundle).
 */
const userDependencies = [
  "@langchain/core@^1.0.0",
  "@langchain/anthropic@^1.0.0",
  "zod@^4.1.0",
  "@types/node@^22.18.0",
];
const consumerFiles = [
  "agent.mjs",
  "check.ts",
  "tsconfig.json",
  "code-mode.ts",
  "tsconfig.code-mode.json",
  "require.cjs",
];

/** The empty package that stands in for dockerode's BuildKit dependencies (docs/api.md's recipe). */
export const noBuildKit = {
  tarball: "no-buildkit-1.0.0.tgz",
  overrides: {
    dockerode: {
      "@grpc/grpc-js": "file:no-buildkit-1.0.0.tgz",
      "@grpc/proto-loader": "file:no-buildkit-1.0.0.tgz",
      protobufjs: "file:no-buildkit-1.0.0.tgz",
    },
  },
};

/**
 * A new project outside the workspace that installs the packed tarballs with `installer`, as a user
 * with only the packages would. pnpm resolves our packages' dependencies on each other from the
 * registry, so the project pins them to the tarballs with pnpm.overrides. `slim` (npm only) follows
 * docs/api.md's smaller install: dockerode's BuildKit dependencies overridden by an empty package,
 * and `npm install --omit=optional`.
 */
export async function createConsumer(
  folder: string,
  installer: Installer,
  packed: PackedPackage[],
  options: { slim?: boolean } = {},
) {
  await mkdir(folder, { recursive: true });
  const overrides = Object.fromEntries(
    packed.map((entry) => [`@codeaction/${entry.name}`, `file:${entry.tarball}`]),
  );
  const manifest = {
    name: "codeaction-consumer",
    private: true,
    type: "module",
    pnpm: { overrides },
    ...(options.slim ? { overrides: noBuildKit.overrides } : {}),
  };
  await writeFile(join(folder, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  if (options.slim) await packNoBuildKit(folder);
  for (const file of consumerFiles) {
    await copyFile(join(repositoryRoot, "tests/packaging/consumer", file), join(folder, file));
  }
  await copyFile(join(repositoryRoot, "examples/data/orders.csv"), join(folder, "orders.csv"));
  await copyFile(join(repositoryRoot, "examples/replays/q3-revenue.json"), join(folder, "q3-revenue.json"));
  const tarballs = packed.map((entry) => entry.tarball);
  const install =
    installer === "npm"
      ? await runCommand(
          "npm",
          [
            "install",
            "--no-audit",
            "--no-fund",
            ...(options.slim ? ["--omit=optional"] : []),
            ...tarballs,
            ...userDependencies,
          ],
          {
            cwd: folder,
            timeoutMs: 900_000,
          },
        )
      : await runCommand("pnpm", ["add", ...tarballs, ...userDependencies], {
          cwd: folder,
          timeoutMs: 900_000,
        });
  if (install.exitCode !== 0) throw new Error(`${installer} install failed: ${describeRun(install)}`);
  return install;
}

/**
 * A new npm project in `folder` that installs the CLI's tarball alone, as `npm install
 * @codeaction/cli` would (the orders CSV and the Q3 replay beside it); resolves with npm's run.
 */
export async function createCliProject(folder: string, packed: PackedPackage[]): Promise<CommandRun> {
  await mkdir(folder, { recursive: true });
  await writeFile(
    join(folder, "package.json"),
    '{ "name": "cli-alone", "private": true, "type": "module" }\n',
  );
  await copyFile(join(repositoryRoot, "examples/data/orders.csv"), join(folder, "orders.csv"));
  await copyFile(join(repositoryRoot, "examples/replays/q3-revenue.json"), join(folder, "q3-revenue.json"));
  const cli = packed.find((entry) => entry.name === "cli");
  if (!cli) throw new Error("no packed @codeaction/cli");
  const install = await runCommand("npm", ["install", "--no-audit", "--no-fund", cli.tarball], {
    cwd: folder,
    timeoutMs: 300_000,
  });
  if (install.exitCode !== 0) throw new Error(`npm install of the CLI failed: ${describeRun(install)}`);
  return install;
}

/** The recipe's empty package, packed into `folder` as no-buildkit-1.0.0.tgz. */
async function packNoBuildKit(folder: string): Promise<void> {
  const source = join(folder, "no-buildkit");
  await mkdir(source);
  const manifest = { name: "no-buildkit", version: "1.0.0", main: "index.js" };
  await writeFile(join(source, "package.json"), `${JSON.stringify(manifest)}\n`);
  await writeFile(join(source, "index.js"), "module.exports = {};\n");
  const pack = await runCommand("npm", ["pack", "--pack-destination", folder], {
    cwd: source,
    timeoutMs: 60_000,
  });
  if (pack.exitCode !== 0) throw new Error(`npm pack failed: ${describeRun(pack)}`);
}

/** Runs the installed `codeaction` bin the way each installer's users do (npx / pnpm exec). */
export function runInstalledCli(
  folder: string,
  installer: Installer,
  args: string[],
  env: Record<string, string> = {},
): Promise<CommandRun> {
  const [command, prefix] = installer === "npm" ? ["npx", ["--no-install"]] : ["pnpm", ["exec"]];
  return runCommand(command, [...prefix, "codeaction", ...args], { cwd: folder, timeoutMs: 300_000, env });
}
