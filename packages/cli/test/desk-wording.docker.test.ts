import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAIFixture } from "@codeaction/core/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askOnPage, type DeskProcess, launchChromium, programReply, startDesk } from "./desk-process.ts";
import { repositoryRoot } from "./run-cli.ts";

// The desk as an analyst reads it (issue 43 #8): a failed question in plain words with its error
// line first, the past runs broken between words, every card at one level, Enter to ask. A real
// `codeaction desk` process (real containers, a replayed model) and Debian's chromium; what is
// checked is read from the DOM, computed layout included. The cases run in order: the replay's
// replies are in the order of the questions.

const orders = join(repositoryRoot, "examples/data/orders.csv");
const columns = (await readFile(orders, "utf8")).split("\n")[0]!.trim().split(",");
const answers = programReply(['print("RESULT: [{\\"orders\\": 1}]")']);
const missingColumn = programReply(["rows = load_orders()", 'print(sum(row["price"] for row in rows))']);

let folder: string;
let desk: DeskProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-wording-"));
  desk = await startDesk({
    cwd: folder,
    args: ["--csv", orders],
    replies: [answers, answers, answers, missingColumn, missingColumn],
  });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(desk.url);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await desk?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** Types `question` with the keyboard and presses Enter; resolves with the new card once it is done. */
async function askWithEnter(question: string) {
  const before = await page.locator(".card").count();
  await page.locator("#question").fill(question);
  await page.locator("#question").press("Enter");
  // The keydown asks at once: by the time press() returns, the card is there and the box empty.
  expect(await page.locator(".card").count()).toBe(before + 1);
  await page
    .locator('.card[data-state="answered"], .card[data-state="failed"]')
    .nth(before)
    .waitFor({ timeout: 150_000 });
  return page.locator(".card").first();
}

describe("the desk as an analyst reads it (issue 43 #8)", () => {
  it("asks on Enter; Shift+Enter makes a new line and asks nothing", async () => {
    const box = page.locator("#question");
    await box.fill("How many orders");
    await box.press("Shift+Enter");
    await box.pressSequentially("per region?");
    expect(await box.inputValue()).toBe("How many orders\nper region?");
    expect(await page.locator(".card").count()).toBe(0);
    await box.press("Enter");
    // Asked within the key's own event: no wait for anything.
    expect(await box.inputValue()).toBe("");
    const card = page.locator(".card").first();
    expect(await card.locator("h3").textContent()).toBe("How many orders\nper region?");
    await page.locator('.card[data-state="answered"]').first().waitFor({ timeout: 150_000 });
  }, 180_000);

  it("shows every card at one level: follow-ups are not indented, nor nested in one another", async () => {
    await askWithEnter("And per month?");
    await askWithEnter("And per quarter, for the whole of the year, by the revenue of each region?");
    const boxes = await page.locator(".card").evaluateAll((cards) =>
      cards.map((card) => {
        const box = card.getBoundingClientRect();
        return { left: box.left, width: box.width, parent: card.parentElement?.id };
      }),
    );
    expect(boxes).toHaveLength(3);
    expect(boxes.map((box) => box.parent)).toEqual(["cards", "cards", "cards"]);
    expect(new Set(boxes.map((box) => box.left)).size).toBe(1);
    expect(new Set(boxes.map((box) => box.width)).size).toBe(1);
    expect(await page.locator(".card.follow-up").count()).toBe(2);
  }, 180_000);

  it("lists past runs with their words whole: a line breaks between words, never inside one", async () => {
    await expect.poll(() => page.locator("#runs li").count()).toBe(3);
    // Each word of the list (run in the page: the test has no DOM types): one with boxes at two
    // heights was broken across lines.
    const brokenWords = await page.evaluate(`(() => {
      const broken = [];
      const walker = document.createTreeWalker(document.getElementById("runs"), NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.textContent.matchAll(/\\S+/g)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
          if (tops.size > 1) broken.push(match[0]);
        }
      }
      return broken;
    })()`);
    expect(brokenWords).toEqual([]);
  });

  it("says in plain words that the question failed, the error line first, the traceback collapsed, and the columns the file has", async () => {
    await page.click("#new-conversation");
    const card = await askWithEnter("What is the total price of the orders?");
    expect(await card.getAttribute("data-state")).toBe("failed");
    const message = (await card.locator(".progress .error").textContent()) ?? "";
    expect(message).toBe(
      "The analysis did not work: the model wrote a program 2 times and each one failed. The last one stopped with: KeyError: 'price'",
    );
    expect(message).not.toMatch(/error\.attempts|maxRepairs|code-action|attempt\(s\)/);
    expect(await card.locator(".progress .fix").textContent()).toBe(
      `There is no column named "price". orders.csv has ${columns.join(", ")}. Ask again using one of these names.`,
    );
    // No traceback in plain sight: each attempt's error line, its output collapsed under it.
    expect(await card.locator(".live-output").count()).toBe(0);
    expect(await card.locator(".error-line code").allTextContents()).toEqual([
      "KeyError: 'price'",
      "KeyError: 'price'",
    ]);
    const output = card.locator("details.output");
    expect(
      await output.evaluateAll((items) => items.map((item) => (item as unknown as { open: boolean }).open)),
    ).toEqual([false, false]);
    expect(await output.locator("summary").first().textContent()).toBe("Traceback and output, attempt 1");
    expect(await output.locator("pre").first().textContent()).toMatch(
      /^Traceback \(most recent call last\):/,
    );
    // What the page shows (innerText leaves out a closed <details>' content).
    const visible = await page.evaluate('document.querySelector(".card").innerText');
    expect(visible).not.toContain("Traceback (most recent call last)");
  }, 180_000);
});

describe("the desk's card for a failed model call (issue 43 #3)", () => {
  it("says the provider failed, where, and what an analyst can do, as the command's per-cause message does", async () => {
    // A live model: a local server in OpenAI's wire format that answers every call with HTTP 500.
    const fixture = await startOpenAIFixture({ replies: [], failures: { status: 500 } });
    const live = await startDesk({
      cwd: folder,
      args: ["--csv", orders, "--retries", "0"],
      env: { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: fixture.baseURL },
    });
    const livePage = await browser.newPage();
    try {
      await livePage.goto(live.url);
      const card = await askOnPage(livePage, "How many orders are there?");
      expect(await card.getAttribute("data-state")).toBe("failed");
      expect(await card.locator(".progress .error").textContent()).toBe(
        `The model's provider at ${fixture.baseURL} had a problem on its side (HTTP 500, tried once).`,
      );
      expect(await card.locator(".progress .fix").textContent()).toBe(
        "Nothing is wrong with your question or your data: the provider may be busy or down. Try again later.",
      );
      expect(fixture.requests.length).toBe(1);
    } finally {
      await livePage.close();
      await live.stop();
      await fixture.close();
    }
  }, 180_000);
});
