import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askOnPage, type DeskProcess, launchChromium, programReply, startDesk } from "./desk-process.ts";
import { everythingServer } from "./reference-servers.ts";
import { repositoryRoot } from "./run-cli.ts";

// The desk as a user gets it: a real `codeaction desk` process (real sandbox containers on the data
// image, a replayed model, server-everything from npm as --server) and Debian's chromium driven by
// playwright-core (never a downloaded browser).

const orders = join(repositoryRoot, "examples/data/orders.csv");
const seedReply = JSON.parse(await readFile(join(repositoryRoot, "examples/replays/q3-revenue.json"), "utf8"))
  .replies[0] as string;
const chartReply = JSON.parse(
  await readFile(join(repositoryRoot, "examples/replays/q3-revenue-chart.json"), "utf8"),
).replies[0] as string;
const csvProgram = [
  "import csv, os",
  'os.makedirs("/workspace/out", exist_ok=True)',
  'with open("/workspace/out/regions.csv", "w", newline="") as handle:',
  "    writer = csv.writer(handle)",
  '    writer.writerow(["region", "orders"])',
  "    counts = {}",
  "    for order in load_orders():",
  '        counts[order["region"]] = counts.get(order["region"], 0) + 1',
  "    for region in sorted(counts):",
  "        writer.writerow([region, counts[region]])",
  'print("RESULT: saved regions.csv")',
];
const replies = [
  seedReply,
  chartReply,
  programReply(csvProgram),
  // get_sum is server-everything's get-sum tool: only there when --server reaches the agent.
  programReply(['print("RESULT: " + get_sum(a=19, b=23))']),
];

let folder: string;
/** The answer card's screenshot replaces docs/desk.png only when asked (CONTRIBUTING.md). */
const updateDocsScreenshot = process.env.CODEACTION_UPDATE_DOCS_SCREENSHOT === "1";
let screenshots: string;
let desk: DeskProcess;
let url: string;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-"));
  screenshots = updateDocsScreenshot
    ? join(repositoryRoot, "docs")
    : await mkdtemp(join(tmpdir(), "codeaction-desk-screenshot-"));
  desk = await startDesk({
    cwd: folder,
    args: ["--data", "--csv", orders, "--server", everythingServer],
    replies,
  });
  ({ url, base } = desk);
  browser = await launchChromium();
  page = await browser.newPage({ acceptDownloads: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await desk?.stop();
  await rm(folder, { recursive: true, force: true });
  if (!updateDocsScreenshot && screenshots) await rm(screenshots, { recursive: true, force: true });
});

describe("codeaction desk (real process, real sandbox, Debian chromium)", () => {
  it("refuses a request without the token (401) and one from a foreign origin (403)", async () => {
    expect((await fetch(`${base}/`)).status).toBe(401);
    expect(
      (await fetch(`${base}/api/files`, { headers: { authorization: "Bearer wrong-token" } })).status,
    ).toBe(401);
    const token = desk.token;
    const foreign = await fetch(`${base}/api/files`, {
      headers: { authorization: `Bearer ${token}`, origin: "http://example.invalid" },
    });
    expect(foreign.status).toBe(403);
    const allowed = await fetch(`${base}/api/files`, { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("content-security-policy")).toContain("default-src 'self'");
  });

  it("answers the seed question over orders.csv with the four regions in a table, in order", async () => {
    await page.goto(url);
    // The token moved into the cookie: the address bar no longer carries it.
    expect(page.url()).toBe(`${base}/`);
    await expect.poll(() => page.locator("#files li").allTextContents()).toEqual(["orders.csv"]);
    const card = await askOnPage(page, "What was the revenue per region in Q3 2026 (July to September)?");
    expect(await card.locator("table.answer-table tbody tr td:first-child").allTextContents()).toEqual([
      "North America",
      "LATAM",
      "EMEA",
      "APAC",
    ]);
    expect(await card.locator("table.answer-table tbody tr td:nth-child(2)").allTextContents()).toEqual([
      "108,664",
      "81,328",
      "77,689",
      "65,023",
    ]);
    expect(await card.locator("details.program summary").allTextContents()).toEqual(["Program, attempt 1"]);
    expect(await card.locator(".tool-call").allTextContents()).toEqual([
      expect.stringMatching(/^tool call load_orders: ok \(\d+ ms\)$/),
    ]);
    await expect
      .poll(() => card.locator(".meta").last().textContent())
      .toContain("question 1 of this conversation");
    // Sorting by revenue, ascending: APAC first.
    await card.locator("th", { hasText: "revenue" }).click();
    expect(await card.locator("tbody tr td:first-child").first().textContent()).toBe("APAC");
    await card.locator("th", { hasText: "revenue" }).click();
    await card.screenshot({ path: join(screenshots, "desk.png") });
  }, 180_000);

  it("answers a follow-up in the same conversation, with the chart inline as a loaded 600 px image", async () => {
    const card = await askOnPage(page, "Chart it.");
    expect(await card.getAttribute("class")).toContain("follow-up");
    expect(await card.locator(".meta").last().textContent()).toContain("question 2 of this conversation");
    const image = card.locator("img.chart");
    await expect
      .poll(() =>
        image.evaluate((node) => {
          const loaded = node as unknown as { complete: boolean; naturalWidth: number };
          return loaded.complete && loaded.naturalWidth;
        }),
      )
      // The replay's figure: 6 x 3.75 inches at 100 dpi.
      .toBe(600);
  }, 180_000);

  it("starts a new conversation and offers a CSV the program saved as a download with its content", async () => {
    await page.click("#new-conversation");
    const card = await askOnPage(page, "Count the orders per region into a CSV.");
    expect(await card.locator(".meta").last().textContent()).toContain("question 1 of this conversation");
    const [download] = await Promise.all([page.waitForEvent("download"), card.locator("a.download").click()]);
    expect(download.suggestedFilename()).toBe("regions.csv");
    const content = await readFile((await download.path())!, "utf8");
    const counts = new Map<string, number>();
    const rows = (await readFile(orders, "utf8")).trim().split("\n");
    const regionColumn = rows[0]!.split(",").indexOf("region");
    for (const row of rows.slice(1)) {
      const region = row.split(",")[regionColumn]!;
      counts.set(region, (counts.get(region) ?? 0) + 1);
    }
    const expected = [...counts.keys()].sort().map((region) => `${region},${counts.get(region)}`);
    expect(content.replaceAll("\r\n", "\n")).toBe(`region,orders\n${expected.join("\n")}\n`);
  }, 180_000);

  it("passes --server to the agent: the program calls the server's tool", async () => {
    const card = await askOnPage(page, "What is 19 plus 23, by the server?");
    expect(await card.getAttribute("data-state")).toBe("answered");
    expect(await card.locator(".answer-text").textContent()).toBe("The sum of 19 and 23 is 42.");
    expect(await card.locator(".tool-call").allTextContents()).toEqual([
      expect.stringMatching(/^tool call get-sum: ok \(\d+ ms\)$/),
    ]);
  }, 180_000);
});
