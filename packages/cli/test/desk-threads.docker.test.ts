import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  askOnPage,
  type DeskProcess,
  dropFile,
  launchChromium,
  programReply,
  startDesk,
} from "./desk-process.ts";
import { repositoryRoot } from "./run-cli.ts";

// Issue 42 on the desk, in Debian's chromium: each step of a question has its own program and output
// on the card; a follow-up reads what the conversation's interpreter holds; "New conversation" drops it.

const orders = join(repositoryRoot, "examples/data/orders.csv");
let folder: string;
let browser: Browser;
let page: Page;
let desk: DeskProcess | undefined;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-threads-"));
  browser = await launchChromium();
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await desk?.stop();
  await rm(folder, { recursive: true, force: true });
});

describe("codeaction desk: steps and the conversation's interpreter", () => {
  it("shows each step's program and output; a follow-up reads the interpreter; New conversation drops it", async () => {
    const q3 = 'q3 = [o for o in load_orders() if "2026-07-01" <= o["date"] <= "2026-09-30"]';
    desk = await startDesk({
      cwd: folder,
      args: ["--csv", orders, "--steps", "2"],
      replies: [
        programReply([q3, 'print("rows:", len(q3))']),
        programReply(['print(f"RESULT: {len(q3)}")']),
        programReply(['print(f"RESULT: {len(q3) * 2}")']),
        programReply(['print(f"RESULT: {len(q3) * 3}")']),
      ],
    });
    await page.goto(desk.url);
    const first = await askOnPage(page, "How many Q3 orders?");
    expect(await first.getAttribute("data-state")).toBe("answered");
    expect(await first.locator(".answer-text").textContent()).toBe("166");
    const summaries = await first.locator("details > summary").allTextContents();
    expect(summaries).toContain("Program, attempt 1");
    expect(summaries).toContain("Program, step 2, attempt 2");
    expect(summaries).toContain("Output, attempt 1 (no-result)");
    expect(summaries).toContain("Output, step 2, attempt 2 (ok)");

    const followUp = await askOnPage(page, "Twice that?");
    expect(await followUp.locator(".answer-text").textContent()).toBe("332");

    await page.click("#new-conversation");
    const fresh = await askOnPage(page, "Three times?");
    expect(await fresh.getAttribute("data-state")).toBe("failed");
    expect(await fresh.textContent()).toContain("NameError");
  }, 240_000);

  it("goes on with the conversation's interpreter after a file is dropped on the page, with a store of its own it removes when it stops", async () => {
    await desk?.stop();
    // The desk's temporary folder is this test's own, so what it leaves there is seen alone.
    const temporary = join(folder, "tmp");
    await mkdir(temporary, { recursive: true });
    const q3 = 'q3 = [o for o in load_orders() if "2026-07-01" <= o["date"] <= "2026-09-30"]';
    desk = await startDesk({
      cwd: folder,
      args: ["--csv", orders],
      env: { TMPDIR: temporary },
      replies: [
        programReply([q3, 'print(f"RESULT: {len(q3)}")']),
        programReply(["import os", "print(f\"RESULT: {len(q3)} {sorted(os.listdir('/workspace/data'))}\")"]),
      ],
    });
    await page.goto(desk.url);
    const first = await askOnPage(page, "How many Q3 orders?");
    expect(await first.locator(".answer-text").textContent()).toBe("166");
    expect(
      (await readdir(temporary)).filter((name) => name.startsWith("codeaction-desk-threads-")),
    ).toHaveLength(1);

    await dropFile(page, { name: "returns.csv", text: "id,amount\n1,2.5\n" });
    await expect
      .poll(() => page.locator("#upload-message").textContent(), { timeout: 60_000 })
      .toBe("returns.csv added");
    // The agent was built again over both files; the interpreter came back with q3 in it.
    const followUp = await askOnPage(page, "And now, with the returns?");
    expect(await followUp.getAttribute("data-state"), (await followUp.textContent()) ?? "").toBe("answered");
    expect(await followUp.locator(".answer-text").textContent()).toBe("166 ['orders.csv', 'returns.csv']");

    await desk.stop();
    desk = undefined;
    expect((await readdir(temporary)).filter((name) => name.startsWith("codeaction-desk-threads-"))).toEqual(
      [],
    );
  }, 240_000);
});
