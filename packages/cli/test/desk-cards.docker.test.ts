import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askOnPage, type DeskProcess, launchChromium, programReply, startDesk } from "./desk-process.ts";
import { repositoryRoot, runCli } from "./run-cli.ts";

// What a card shows while and after a program runs, the desk's past runs from the journal, and the
// failures a user can act on, each provoked for real: a program that fails, an image the engine does
// not have, no Docker engine at the address the desk is given. Real `codeaction desk` processes,
// real containers, Debian's chromium.

const orders = join(repositoryRoot, "examples/data/orders.csv");
// The program prints, waits, prints: the first line must be on the page while it waits.
const liveProgram = programReply([
  "import time",
  'print("first line")',
  "time.sleep(8)",
  'print("second line")',
  'print("RESULT: done")',
]);
const failingProgram = programReply(["rows = load_orders()", 'raise ValueError("no column named price")']);

let folder: string;
let browser: Browser;
let page: Page;
const desks: DeskProcess[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-cards-"));
  browser = await launchChromium();
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const desk of desks) await desk.stop();
  await rm(folder, { recursive: true, force: true });
});

async function openDesk(options: {
  cwd?: string;
  args: string[];
  replies: string[];
  env?: Record<string, string>;
}) {
  const desk = await startDesk({ cwd: options.cwd ?? folder, ...options });
  desks.push(desk);
  await page.goto(desk.url);
  return desk;
}

describe("codeaction desk: live output, failures and past runs", () => {
  it("shows the program's output lines on the card while it runs", async () => {
    await openDesk({ args: ["--csv", orders], replies: [liveProgram, failingProgram, failingProgram] });
    await page.fill("#question", "Print, wait, print.");
    await page.click("#ask-button");
    const card = page.locator(".card").first();
    await card.locator(".live-output", { hasText: "first line" }).waitFor({ timeout: 120_000 });
    // Seen while the program sleeps: the turn has not ended, the second line has not come.
    expect(await card.getAttribute("data-state")).toBe("running");
    expect(await card.locator(".live-output").textContent()).toBe("first line\n");
    await page.locator('.card[data-state="answered"]').first().waitFor({ timeout: 120_000 });
    expect(await card.locator(".answer-text").textContent()).toBe("done");
    expect(await card.locator("details.output pre").textContent()).toBe(
      "first line\nsecond line\nRESULT: done\n",
    );
  }, 180_000);

  it("shows a program that failed in every attempt on its card, with the fix", async () => {
    const card = await askOnPage(page, "What is the total price?");
    expect(await card.getAttribute("data-state")).toBe("failed");
    expect(await card.locator(".progress .error").textContent()).toBe(
      "The analysis did not work: the model wrote a program 2 times and each one failed. The last one stopped with: ValueError: no column named price",
    );
    expect(await card.locator(".fix").textContent()).toMatch(
      /^Ask again saying more: which file, which columns/,
    );
    const outputs = await card.locator("details.output pre").allTextContents();
    expect(outputs).toHaveLength(2);
    expect(outputs[1]).toContain("ValueError: no column named price");
  }, 180_000);

  it("lists the desk's past runs from the journal, newest first, in a later desk too, and not the runs of ask", async () => {
    const runs = page.locator("#runs li .question");
    await expect
      .poll(() => runs.allTextContents())
      .toEqual(["What is the total price?", "Print, wait, print."]);
    expect(await page.locator("#runs li").first().getAttribute("class")).toBe("past-run failed");
    // A question asked with `codeaction ask` in the same folder goes to the same journal.
    const replay = join(folder, "ask-replay.json");
    await writeFile(replay, JSON.stringify({ replies: [programReply(['print("RESULT: 1")'])] }));
    const asked = await runCli(["ask", "--replay", replay, "Asked on the command line."], { cwd: folder });
    expect(asked.exitCode, asked.stderr).toBe(0);
    await desks[0]!.stop();
    await openDesk({ args: ["--csv", orders], replies: [] });
    await expect
      .poll(() => runs.allTextContents())
      .toEqual(["What is the total price?", "Print, wait, print."]);
  }, 180_000);

  it("shows an image the engine does not have on the card, with the command that builds it", async () => {
    const image = "codeaction/python:desk-test-absent";
    await openDesk({
      cwd: await mkdtemp(join(folder, "image-")),
      args: ["--csv", orders, "--image", image, "--no-journal"],
      replies: [programReply(['print("RESULT: 1")'])],
    });
    const card = await askOnPage(page, "Anything?");
    expect(await card.getAttribute("data-state")).toBe("failed");
    expect(await card.locator(".progress .error").textContent()).toContain(
      `The sandbox image "${image}" is not present in the Docker engine.`,
    );
    expect(await card.locator(".fix").textContent()).toBe(
      `Build it: codeaction image build --tag ${image}; or restart the desk with --image naming an image you have (docker images lists them).`,
    );
  }, 180_000);

  it("shows no Docker engine at the address given (DOCKER_HOST) on the card, with the fix", async () => {
    await openDesk({
      cwd: await mkdtemp(join(folder, "docker-")),
      args: ["--csv", orders, "--no-journal"],
      replies: [programReply(['print("RESULT: 1")'])],
      env: { DOCKER_HOST: `unix://${join(folder, "no-engine.sock")}` },
    });
    const card = await askOnPage(page, "Anything?");
    expect(await card.getAttribute("data-state")).toBe("failed");
    expect(await card.locator(".progress .error").textContent()).toMatch(/No Docker engine answered/);
    expect(await card.locator(".fix").textContent()).toMatch(/^Start Docker/);
  }, 180_000);
});
