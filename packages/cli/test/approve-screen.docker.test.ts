import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chargeProgram, ledgerServer } from "./approve-later-session.ts";
import { binPath } from "./run-cli.ts";

// `codeaction ask --approve` in a real terminal, read from the SCREEN (tmux's own server, on a
// socket of this file's, is the terminal): the approval question stays visible while it waits (the
// spinner used to redraw over it), a line says an answer is awaited, and an answer that is not one
// is asked again (issue 43, 1).

const socket = `codeaction-approve-screen-${randomBytes(4).toString("hex")}`;
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-approve-screen-"));
});
afterAll(async () => {
  try {
    execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  } catch {
    // The server ended with its session.
  }
  await rm(folder, { recursive: true, force: true });
});

const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
/** What the terminal shows now, line by line (trailing blanks cut). */
const screen = () => tmux("capture-pane", "-p", "-t", "ask");

describe("ask --approve in a terminal, read from the screen", () => {
  it("keeps the question on screen while it waits, says so, and asks again on an answer that is not one", async () => {
    const cwd = await mkdtemp(join(folder, "ask-"));
    const ledger = join(cwd, "ledger.txt");
    await writeFile(ledger, "");
    const replay = join(cwd, "replies.json");
    await writeFile(replay, JSON.stringify({ replies: [`\`\`\`python\n${chargeProgram(42)}\`\`\``] }));
    const command = [
      process.execPath,
      binPath,
      "ask",
      "--approve",
      "--server",
      `node ${ledgerServer} ${ledger}`,
    ]
      .concat(["--replay", replay, "--no-journal", "Charge Ada."])
      .map(quote)
      .join(" ");
    const shell = `cd ${quote(cwd)} && env -u OPENAI_API_KEY ${command}; echo "EXITED $?"; sleep 60`;
    tmux("new-session", "-d", "-x", "160", "-y", "40", "-s", "ask", shell);

    const question = 'allow lookup {"customer":"ada"}? [y/N/later]';
    await expect.poll(screen, { timeout: 90_000, interval: 200 }).toContain(question);
    // The spinner redrew its line every 80 ms: give it many chances to draw over the question.
    await sleep(1500);
    const waiting = screen();
    expect(waiting).toContain(question);
    expect(waiting).toContain("codeaction: waiting for your answer (y, n or later; Enter: n):");
    expect(waiting).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);

    tmux("send-keys", "-t", "ask", "maybe", "Enter");
    await expect.poll(screen, { timeout: 30_000, interval: 200 }).toContain('"maybe" is not an answer');
    expect(screen().split(question)).toHaveLength(3);
    expect(await readFile(ledger, "utf8")).toBe("");

    tmux("send-keys", "-t", "ask", "y", "Enter");
    await expect
      .poll(screen, { timeout: 60_000, interval: 200 })
      .toMatch(/allow charge_card .*\[y\/N\/later\]/);
    await sleep(1500);
    expect(screen()).toMatch(/allow charge_card .*\[y\/N\/later\]/);
    tmux("send-keys", "-t", "ask", "y", "Enter");
    await expect.poll(screen, { timeout: 60_000, interval: 200 }).toContain("EXITED 0");
    expect(screen()).toContain("r-ada-42");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
  });

  // chat already stopped its spinner before a question (and nothing redraws it meanwhile); what is
  // new there is the line saying an answer is awaited and the question asked again.
  it("chat --approve: the question and a line saying it waits stay on screen, an answer that is not one is asked again", async () => {
    const cwd = await mkdtemp(join(folder, "chat-"));
    const ledger = join(cwd, "ledger.txt");
    await writeFile(ledger, "");
    const replay = join(cwd, "replies.json");
    await writeFile(replay, JSON.stringify({ replies: [`\`\`\`python\n${chargeProgram(42)}\`\`\``] }));
    const command = [
      process.execPath,
      binPath,
      "chat",
      "--approve",
      "--server",
      `node ${ledgerServer} ${ledger}`,
    ]
      .concat(["--replay", replay])
      .map(quote)
      .join(" ");
    const shell = `cd ${quote(cwd)} && env -u OPENAI_API_KEY ${command}; echo "EXITED $?"; sleep 60`;
    tmux("new-session", "-d", "-x", "160", "-y", "40", "-s", "chat", shell);
    const chatScreen = () => tmux("capture-pane", "-p", "-t", "chat");

    await expect.poll(chatScreen, { timeout: 90_000, interval: 200 }).toMatch(/^\?\s*$/m);
    tmux("send-keys", "-t", "chat", "Charge Ada.", "Enter");
    const question = 'allow lookup {"customer":"ada"}? [y/N/later]';
    await expect.poll(chatScreen, { timeout: 90_000, interval: 200 }).toContain(question);
    await sleep(1500);
    expect(chatScreen()).toContain(question);
    expect(chatScreen()).toContain("codeaction: waiting for your answer (y, n or later; Enter: n):");
    tmux("send-keys", "-t", "chat", "maybe", "Enter");
    await expect.poll(chatScreen, { timeout: 30_000, interval: 200 }).toContain('"maybe" is not an answer');
    expect(chatScreen().split(question)).toHaveLength(3);
    tmux("send-keys", "-t", "chat", "y", "Enter");
    await expect
      .poll(chatScreen, { timeout: 60_000, interval: 200 })
      .toMatch(/allow charge_card .*\[y\/N\/later\]/);
    await sleep(1500);
    expect(chatScreen()).toMatch(/allow charge_card .*\[y\/N\/later\]/);
    tmux("send-keys", "-t", "chat", "y", "Enter");
    await expect.poll(chatScreen, { timeout: 60_000, interval: 200 }).toContain("r-ada-42");
    tmux("send-keys", "-t", "chat", "/exit", "Enter");
    await expect.poll(chatScreen, { timeout: 30_000, interval: 200 }).toContain("EXITED 0");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
  });
});
