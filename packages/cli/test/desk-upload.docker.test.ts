import { watch } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
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

// Uploads on the desk as a user makes them: files dropped on the page of a real `codeaction desk`
// process (real sandbox containers, a replayed model) in Debian's chromium, and the upload endpoint
// sent hostile requests directly. Each case stands alone (run with -t, or in any order): it looks
// only at the names it uploads or plants, and compares the folder with itself before.

const orders = join(repositoryRoot, "examples/data/orders.csv");
const limit = 20 * 1024 * 1024;
const returns = "order_id,amount\nO-1,10.5\nO-2,4\nO-3,7.25\n";
const replies = [
  programReply([
    "import json",
    "rows = load_returns()",
    'print("RESULT: " + json.dumps([{"returns": len(rows), "amount": sum(row["amount"] for row in rows)}]))',
  ]),
];

let folder: string;
let uploads: string;
let desk: DeskProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-upload-"));
  uploads = join(folder, "codeaction-uploads");
  // The desk makes it on the first upload; made here, a case can plant things in it and watch it.
  await mkdir(uploads, { mode: 0o700 });
  desk = await startDesk({ cwd: folder, args: ["--csv", orders, "--no-journal"], replies });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(desk.url);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await desk?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** The upload folder's names, sorted. */
async function listing(): Promise<string[]> {
  return (await readdir(uploads)).sort();
}

/**
 * Resolves with `what` once `happened(name)` holds for a name changed in the upload folder: the
 * time-free sign that the desk went on where it should have stopped. `stop()` ends the watch.
 */
function watchUploads(happened: (name: string) => Promise<boolean>, what: string) {
  let watcher: ReturnType<typeof watch> | undefined;
  const seen = new Promise<string>((resolve) => {
    watcher = watch(uploads, (_event, name) => {
      if (name) void happened(name).then((yes) => yes && resolve(what));
    });
  });
  return { seen, stop: () => watcher?.close() };
}

/** POST /api/upload?name=... with the token and a body, sent by hand; resolves with the status and the JSON answer. */
function post(options: {
  name: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** Leave the body unfinished: send `body` (chunked) and wait for the answer without ending it. */
  unfinished?: boolean;
}): Promise<{ status: number; body: { error?: string; fix?: string; name?: string } }> {
  const url = new URL(`/api/upload?name=${encodeURIComponent(options.name)}`, desk.base);
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: "POST", headers: { authorization: `Bearer ${desk.token}`, ...options.headers } },
      (response) => {
        let text = "";
        response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    sent.on("error", reject);
    if (options.body) sent.write(options.body);
    if (options.unfinished) sent.flushHeaders();
    else sent.end();
  });
}

describe("codeaction desk: uploads", () => {
  it("takes a CSV dropped on the page into its upload folder; it joins the file list and can be asked about", async () => {
    await expect.poll(() => page.locator("#files li").allTextContents()).toContain("orders.csv");
    await dropFile(page, { name: "returns.csv", text: returns });
    await expect
      .poll(() => page.locator("#upload-message").textContent(), { timeout: 60_000 })
      .toBe("returns.csv added");
    await expect.poll(() => page.locator("#files li").allTextContents()).toContain("returns.csv");
    const kept = join(uploads, "returns.csv");
    expect(await readFile(kept, "utf8")).toBe(returns);
    expect((await stat(kept)).mode & 0o777).toBe(0o600);
    expect((await stat(uploads)).mode & 0o777).toBe(0o700);
    const card = await askOnPage(page, "How many returns, and how much?");
    expect(await card.getAttribute("data-state")).toBe("answered");
    expect(await card.locator("table.answer-table tbody tr td").allTextContents()).toEqual(["3", "21.75"]);
  }, 180_000);

  it("refuses a file over the limit with a message on the page, and sends nothing", async () => {
    const before = await listing();
    await dropFile(page, { name: "big.csv", size: limit + 1 });
    const message = page.locator("#upload-message");
    await expect.poll(() => message.getAttribute("class")).toBe("error");
    expect(await message.textContent()).toBe(
      "big.csv (20 MiB) is over the desk's upload limit of 20 MiBgive a larger file on the command line instead: codeaction desk --file FILE",
    );
    expect(await listing()).toEqual(before);
  });

  it("shows the server's refusal of a format it does not read, and of a file it cannot read, with the fix", async () => {
    const before = await listing();
    const filesBefore = await page.locator("#files li").allTextContents();
    await dropFile(page, { name: "notes.xls", text: "not a workbook" });
    const message = page.locator("#upload-message");
    await expect
      .poll(() => message.locator(".fix").textContent())
      .toMatch(/save an old Excel file as \.xlsx$/);
    expect(await message.locator("span").first().textContent()).toBe(
      'notes.xls: ".xls" is not a data format the desk reads',
    );
    await dropFile(page, { name: "broken.json", text: '{"not": "an array of records"' });
    await expect
      .poll(() => message.locator("span").first().textContent(), { timeout: 60_000 })
      .toMatch(/^\S+\/codeaction-uploads\/broken\.json: /);
    expect(await message.getAttribute("class")).toBe("error");
    expect(await message.locator(".fix").textContent()).toBe(
      "Fix the file (or save it in another format the desk reads), then drop it again.",
    );
    // The file it could not read is not kept.
    expect(await listing()).toEqual(before);
    expect(await page.locator("#files li").allTextContents()).toEqual(filesBefore);
  });

  it("refuses uploads without the token (401) or from a foreign origin (403)", async () => {
    const before = await listing();
    const url = `${desk.base}/api/upload?name=sneaky.csv`;
    expect((await fetch(url, { method: "POST", body: "a,b\n1,2\n" })).status).toBe(401);
    const foreign = await fetch(url, {
      method: "POST",
      body: "a,b\n1,2\n",
      headers: { authorization: `Bearer ${desk.token}`, origin: "http://example.invalid" },
    });
    expect(foreign.status).toBe(403);
    expect(await listing()).toEqual(before);
  });

  it("keeps only the plain name: no folder part, no way out of the upload folder", async () => {
    const answer = await post({ name: "../../escape.csv", body: Buffer.from("a,b\n1,2\n") });
    expect(answer).toEqual({ status: 200, body: { name: "escape.csv" } });
    expect(await listing()).toContain("escape.csv");
    await expect(lstat(join(folder, "..", "escape.csv"))).rejects.toThrow(/ENOENT/);
    const hidden = await post({ name: ".hidden<b>.csv", body: Buffer.from("a,b\n1,2\n") });
    expect(hidden).toEqual({ status: 200, body: { name: "hidden_b_.csv" } });
  }, 120_000);

  it("never writes through a link planted at the exact name the upload gets: the open refuses it (O_EXCL, O_NOFOLLOW)", async () => {
    const outside = join(folder, "outside");
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, "target.csv"), "untouched\n");
    await symlink(join(outside, "target.csv"), join(uploads, "linked.csv"));
    const answer = await post({ name: "linked.csv", body: Buffer.from("a,b\n1,2\n") });
    expect(answer).toEqual({ status: 200, body: { name: "linked-2.csv" } });
    expect(await readFile(join(outside, "target.csv"), "utf8")).toBe("untouched\n");
    expect((await lstat(join(uploads, "linked.csv"))).isSymbolicLink()).toBe(true);
  }, 120_000);

  it("never writes over a file that is at the exact name when the upload opens it (O_EXCL)", async () => {
    // The desk lists the folder first; a file there by the time it opens is what the open finds.
    await writeFile(join(uploads, "kept.csv"), "x,y\n7,8\n");
    const answer = await post({ name: "kept.csv", body: Buffer.from("a,b\n1,2\n") });
    expect(answer).toEqual({ status: 200, body: { name: "kept-2.csv" } });
    expect(await readFile(join(uploads, "kept.csv"), "utf8")).toBe("x,y\n7,8\n");
    expect(await readFile(join(uploads, "kept-2.csv"), "utf8")).toBe("a,b\n1,2\n");
  }, 120_000);

  it("refuses a body over the limit by its declared length before reading: no file is ever created", async () => {
    const created = watchUploads(async (name) => name.startsWith("declared"), "a file was created");
    try {
      const declared = post({
        name: "declared.csv",
        headers: { "content-length": String(limit + 1) },
        unfinished: true,
      });
      // Were the length not checked, the desk would create the file and wait for the body.
      const outcome = await Promise.race([declared, created.seen]);
      expect(outcome).toEqual({
        status: 413,
        body: {
          error: "declared.csv is over the desk's upload limit of 20 MiB",
          fix: "give a larger file on the command line instead: codeaction desk --file FILE",
        },
      });
    } finally {
      created.stop();
    }
    expect((await listing()).filter((name) => name.startsWith("declared"))).toEqual([]);
  }, 120_000);

  it("refuses a body sent without a length once it passes the limit: never more than the limit on disk", async () => {
    const over = watchUploads(async (name) => {
      const size = await stat(join(uploads, name)).then(
        (status) => status.size,
        () => 0,
      );
      return name.startsWith("counted") && size > limit;
    }, "more than the limit was written");
    try {
      // Chunked, never ended: the desk counts, stops at the limit and answers before the body ends.
      const counted = post({ name: "counted.csv", body: Buffer.alloc(limit + 1, 0x61), unfinished: true });
      const outcome = await Promise.race([counted, over.seen]);
      expect(outcome).toMatchObject({
        status: 413,
        body: { error: "counted.csv is over the desk's upload limit of 20 MiB" },
      });
    } finally {
      over.stop();
    }
    expect((await listing()).filter((name) => name.startsWith("counted"))).toEqual([]);
  }, 120_000);
});
