import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { binPath } from "./run-cli.ts";

// A real `codeaction desk` process and Debian's chromium driven by playwright-core (never a
// downloaded browser), for the desk's browser tests.

export type DeskProcess = {
  /** The address the desk printed, with its token. */
  url: string;
  /** http://127.0.0.1:<port> */
  base: string;
  token: string;
  /** What the desk wrote on stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
};

/**
 * Starts `codeaction desk ...args` in `cwd` with `replies` as its replay (without `replies`, the
 * live model `env` names: a local fixture); resolves once it prints its address.
 */
export async function startDesk(options: {
  cwd: string;
  args: string[];
  replies?: string[];
  env?: Record<string, string>;
}): Promise<DeskProcess> {
  const replay = join(options.cwd, "replay.json");
  if (options.replies) await writeFile(replay, JSON.stringify({ replies: options.replies }));
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  if (options.env?.CODEACTION_RESUME_SECRET === undefined) delete env.CODEACTION_RESUME_SECRET;
  Object.assign(env, options.env);
  const model = options.replies ? ["--replay", replay] : [];
  const desk: ChildProcess = spawn(process.execPath, [binPath, "desk", ...options.args, ...model], {
    cwd: options.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  desk.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    desk.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const found = /codeaction desk: (http\S+)/.exec(stdout);
      if (found?.[1]) resolve(found[1]);
    });
    desk.once("exit", (code) => reject(new Error(`codeaction desk exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    base: new URL(url).origin,
    token: new URL(url).searchParams.get("token") ?? "",
    stderr: () => stderr,
    stop: async () => {
      if (desk.exitCode !== null || desk.signalCode !== null) return;
      const exited = new Promise((resolve) => desk.once("exit", resolve));
      desk.kill("SIGTERM");
      await exited;
    },
  };
}

/** Debian's chromium, headless, with nothing reaching out. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

/** Asks `question` on the page; resolves with its card once the card is answered or failed. */
export async function askOnPage(page: Page, question: string): Promise<Locator> {
  const before = await page.locator(".card").count();
  await page.fill("#question", question);
  await page.click("#ask-button");
  // One question runs at a time and every earlier card is done: the new one is done when one more is.
  await page
    .locator('.card[data-state="answered"], .card[data-state="failed"]')
    .nth(before)
    .waitFor({ timeout: 150_000 });
  return page.locator(".card").first();
}

/** A program as a model's reply: a sentence and the fenced program. */
export function programReply(lines: string[]): string {
  return `Here is the program.\n\n\`\`\`python\n${lines.join("\n")}\n\`\`\``;
}

/**
 * Drops one file on the page's drop zone, as a user dragging it from their file manager would: a
 * `drop` event carrying a DataTransfer with the file (`text`, or `size` zero bytes).
 */
export async function dropFile(
  page: Page,
  file: { name: string; text?: string; size?: number },
): Promise<void> {
  const body = file.size === undefined ? JSON.stringify(file.text ?? "") : `new Uint8Array(${file.size})`;
  const dataTransfer = await page.evaluateHandle(
    `(() => { const transfer = new DataTransfer(); transfer.items.add(new File([${body}], ${JSON.stringify(file.name)})); return transfer; })()`,
  );
  await page.dispatchEvent("#drop", "drop", { dataTransfer });
}
