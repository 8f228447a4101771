import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { binPath, repositoryRoot } from "./run-cli.ts";

// `codeaction ask --approve` answered "later" in a real terminal (`script`), for the resume tests:
// the tools are an MCP server that counts its calls on the host, in a file (the ledger).

export const ledgerServer = join(repositoryRoot, "packages/cli/test/fixtures/ledger-server.ts");

/** A program that looks Ada up, then charges her `amount` (the call the terminal answers "later"). */
export function chargeProgram(amount: number): string {
  return `
import json
def value(result):
    return json.loads(result) if isinstance(result, str) else result
account = value(lookup(customer="ada"))
try:
    receipt = value(charge_card(customer="ada", amount=${amount}))
    print("RESULT:", receipt["receipt"])
except ToolDenied as denied:
    print("RESULT: not charged:", denied)
`;
}

/**
 * A command in a real terminal (`script`): each step writes its reply (and Enter) once the output
 * after the previous step's match matches its pattern. A session that stops matching is ended
 * (killed) after `giveUpMs`, so that the assertions report what it printed.
 */
export async function inTerminal(
  cwd: string,
  args: string[],
  steps: Array<[RegExp, string]>,
  env: Record<string, string | undefined>,
  giveUpMs = 90_000,
) {
  const command = [process.execPath, binPath, ...args]
    .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
    .join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd,
    env: { ...process.env, OPENAI_API_KEY: undefined, ...env },
  });
  let output = "";
  let from = 0;
  let step = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
    for (let match = steps[step]?.[0].exec(output.slice(from)); match; ) {
      from += match.index + match[0].length;
      child.stdin.write(`${steps[step++]![1]}\n`);
      match = steps[step]?.[0].exec(output.slice(from));
    }
  });
  const giveUp = setTimeout(() => child.kill("SIGKILL"), giveUpMs);
  const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(giveUp);
  return { exitCode, output, steps: step };
}

/**
 * `ask --approve` in `cwd` (a new folder under `parent` when not given) whose program charges
 * `amount`: "y" for lookup, "later" for charge_card. Returns the folder, the ledger, the options a
 * resume needs, and the terminal session.
 */
export async function laterRun(options: {
  parent: string;
  name: string;
  amount: number;
  env: Record<string, string | undefined>;
  cwd?: string;
}) {
  const cwd = options.cwd ?? (await mkdtemp(join(options.parent, `${options.name}-`)));
  const ledger = join(cwd, "ledger.txt");
  await writeFile(ledger, "", { flag: "a" });
  const replay = join(cwd, `replies-${options.amount}.json`);
  await writeFile(
    replay,
    JSON.stringify({ replies: [`\`\`\`python\n${chargeProgram(options.amount)}\`\`\``] }),
  );
  const resumeOptions = ["--server", `node ${ledgerServer} ${ledger}`, "--replay", replay];
  const asked = await inTerminal(
    cwd,
    ["ask", "--approve", ...resumeOptions, "Charge Ada."],
    [
      [/\[y\/N\/later\]/, "y"],
      [/\[y\/N\/later\]/, "later"],
    ],
    options.env,
  );
  return { cwd, ledger, options: resumeOptions, asked };
}
