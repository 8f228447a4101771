import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askOnPage, type DeskProcess, launchChromium, programReply, startDesk } from "./desk-process.ts";
import { repositoryRoot } from "./run-cli.ts";

// Issue 45's attacks on the desk, each against a real `codeaction desk` process of its own (real
// sandbox containers, a replayed model) and Debian's chromium: a program's files that try to run
// on the desk's origin (High #1), a page of another port of 127.0.0.1 in the same browser profile
// (High #2), and a question whose page goes away while it runs (issue 43 #11).

const orders = join(repositoryRoot, "examples/data/orders.csv");
let folder: string;
let browser: Browser;
const desks: DeskProcess[] = [];
const servers: Server[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-attacks-"));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const desk of desks) await desk.stop();
  for (const server of servers) server.close();
  await rm(folder, { recursive: true, force: true });
});

async function openDesk(replies: string[]): Promise<DeskProcess> {
  const desk = await startDesk({
    cwd: await mkdtemp(join(folder, "desk-")),
    args: ["--csv", orders],
    replies,
  });
  desks.push(desk);
  return desk;
}

/** A question asked by hand (the token as Bearer), read to the end of its answer; its status. */
async function askDirectly(desk: DeskProcess, question: string): Promise<number> {
  const answer = await fetch(`${desk.base}/api/ask`, {
    method: "POST",
    headers: { authorization: `Bearer ${desk.token}`, "content-type": "application/json" },
    body: JSON.stringify({ question }),
  });
  await answer.text();
  return answer.status;
}

type PastRun = { question: string; status: string; error?: string };
async function pastRuns(desk: DeskProcess): Promise<PastRun[]> {
  const answer = await fetch(`${desk.base}/api/runs`, { headers: { authorization: `Bearer ${desk.token}` } });
  return ((await answer.json()) as { runs: PastRun[] }).runs;
}

/** Every request any page of `context` makes, as it makes it (the test's own navigations marked so). */
function recordRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on("request", (request: Request) =>
    seen.push(`${request.isNavigationRequest() ? "navigation" : request.method()} ${request.url()}`),
  );
  return seen;
}

const evilScript = [
  'document.title = "evil ran";',
  'fetch("/api/ask?from=evil", { method: "POST", headers: { "content-type": "application/json" },',
  '  body: JSON.stringify({ question: "a question of the program\'s own" }) });',
].join("\n");
const evilSvg = [
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80">',
  '<rect width="120" height="80" fill="#4c72b0"/>',
  '<script>document.title = "svg ran"; fetch("/api/runs?from=svg");</script>',
  '<script href="evil.js"/>',
  "</svg>",
].join("\n");
// The program a prompt injection in the data would steer the model into writing.
const writesEvilFiles = programReply([
  "import os",
  'os.makedirs("/workspace/out", exist_ok=True)',
  `open("/workspace/out/chart.svg", "w").write(${JSON.stringify(evilSvg)})`,
  `open("/workspace/out/evil.js", "w").write(${JSON.stringify(evilScript)})`,
  'print("RESULT: charted")',
]);

describe("files a program wrote never run on the desk's origin (issue 45, High #1)", () => {
  it("shows the SVG as an image; opened in its own tab, neither it nor the script beside it runs", async () => {
    const desk = await openDesk([writesEvilFiles]);
    const context = await browser.newContext({ acceptDownloads: true });
    const requests = recordRequests(context);
    const page = await context.newPage();
    await page.goto(desk.url);
    const card = await askOnPage(page, "Chart the orders.");
    expect(await card.getAttribute("data-state")).toBe("answered");
    const chart = card.locator("img.chart");
    await expect
      .poll(() => chart.evaluate((node) => (node as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(120);
    const svgUrl = new URL((await chart.getAttribute("src")) ?? "", desk.base).href;
    // "Open image in new tab", and the script typed in the address bar: each a navigation.
    for (const address of [svgUrl, svgUrl.replace(/chart\.svg$/, "evil.js")]) {
      const tab = await context.newPage();
      await tab.goto(address).catch(() => undefined);
      // A document that ran either script has this title by the time it has loaded.
      expect(await tab.title()).not.toMatch(/ran/);
      await tab.close();
    }
    // Neither script asked for anything, and the SVG never loaded the script.
    expect(requests.filter((request) => /from=|^GET .*\/evil\.js/.test(request))).toEqual([]);
    expect((await pastRuns(desk)).map((run) => run.question)).toEqual(["Chart the orders."]);
    await context.close();
  }, 180_000);
});

/** A page served from another port of 127.0.0.1 that tries to make the desk at `deskBase` run a question. */
async function attackerPage(deskBase: string): Promise<string> {
  const body = JSON.stringify({ question: "asked by another port's page" });
  const script = `
    const results = [];
    for (const init of [
      { method: "POST", credentials: "include", headers: { "content-type": "text/plain" }, body: ${JSON.stringify(body)} },
      { method: "POST", credentials: "include", mode: "no-cors", headers: { "content-type": "text/plain" }, body: ${JSON.stringify(body)} },
    ]) {
      try { results.push((await fetch(${JSON.stringify(`${deskBase}/api/ask`)}, init)).status); }
      catch (error) { results.push(String(error)); }
    }
    document.title = "done";`;
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><title>attacker</title><script type="module">${script}</script>`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe("a page of another port of 127.0.0.1 cannot act on the desk (issue 45, High #2)", () => {
  it("in the same browser profile, logged in to the desk: its question never runs", async () => {
    const desk = await openDesk([programReply(['print("RESULT: 1")'])]);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(desk.url);
    await expect.poll(() => page.locator("#files li").allTextContents()).toEqual(["orders.csv"]);
    const attacker = await context.newPage();
    await attacker.goto(await attackerPage(desk.base));
    await expect.poll(() => attacker.title()).toBe("done");
    // A question the attack started would hold the desk (409) until its record is in the journal:
    // once one of ours has run to its end, every record is there.
    await expect.poll(() => askDirectly(desk, "asked by the test"), { timeout: 60_000 }).toBe(200);
    expect((await pastRuns(desk)).map((run) => run.question)).toEqual(["asked by the test"]);
    await context.close();
  }, 180_000);
});

describe("a question whose page goes away is cancelled (issue 43 #11)", () => {
  it("closing the tab mid-run cancels the run, and the next question is not refused", async () => {
    const sleeper = programReply([
      "import time",
      'print("started", flush=True)',
      "time.sleep(40)",
      'print("RESULT: slept")',
    ]);
    const desk = await openDesk([sleeper, programReply(['print("RESULT: 2")'])]);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(desk.url);
    await page.fill("#question", "Sleep.");
    await page.click("#ask-button");
    await page.locator(".live-output", { hasText: "started" }).waitFor({ timeout: 120_000 });
    await page.close();
    // The record is written when the run ends: cancelled by the page going away, not after its sleep.
    await expect.poll(() => pastRuns(desk), { timeout: 60_000 }).toHaveLength(1);
    const [run] = await pastRuns(desk);
    expect(run, JSON.stringify(run)).toMatchObject({ question: "Sleep.", status: "aborted" });
    expect(run?.error).toMatch(/aborted.*the page that asked went away/);
    await expect.poll(() => askDirectly(desk, "Next.")).toBe(200);
    await context.close();
  }, 180_000);
});
