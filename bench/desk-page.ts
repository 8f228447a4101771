import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const repositoryRoot = fileURLToPath(new URL("../", import.meta.url));
const orders = join(repositoryRoot, "examples/data/orders.csv");
const question = "What was the revenue per region in Q3 2026 (July to September)?";

/** Wall times (ms) of the same replayed question: on the desk's page, and with `codeaction ask`. */
export type DeskPageSamples = { page: number[]; ask: number[] };

/**
 * The seed question over orders.csv with its recorded reply, interleaved: (m) on the page of a
 * running `codeaction desk` in Debian's chromium, from "Ask" clicked to the answer's table rendered;
 * (n) `codeaction ask` as a process, from its start to its exit. Every answer must name the same four
 * regions in the same order.
 */
export async function measureDeskPage(options: {
  bin: string;
  rounds: number;
  onProgress?: (message: string) => void;
}): Promise<DeskPageSamples> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-desk-page-"));
  const seed = JSON.parse(
    await readFile(join(repositoryRoot, "examples/replays/q3-revenue.json"), "utf8"),
  ) as {
    replies: string[];
  };
  const replay = join(folder, "seed.json");
  await writeFile(replay, JSON.stringify(seed));
  // The desk answers every question of the session from one replay: one recorded reply per question.
  const deskReplay = join(folder, "desk.json");
  await writeFile(deskReplay, JSON.stringify({ replies: Array(options.rounds + 1).fill(seed.replies[0]) }));
  const desk = spawn(
    process.execPath,
    [options.bin, "desk", "--csv", orders, "--replay", deskReplay, "--no-journal"],
    {
      cwd: folder,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(await deskAddress(desk));
    const samples: DeskPageSamples = { page: [], ask: [] };
    for (let round = 0; round <= options.rounds; round += 1) {
      // Each question on its own, as `ask` answers it.
      await page.click("#new-conversation");
      await page.fill("#question", question);
      const tables = page.locator('.card[data-state="answered"] table.answer-table');
      const before = await tables.count();
      const started = performance.now();
      await page.click("#ask-button");
      await tables.nth(before).waitFor({ timeout: 120_000 });
      const pageMs = performance.now() - started;
      const regions = await page
        .locator(".card")
        .first()
        .locator("tbody tr td:first-child")
        .allTextContents();
      checkRegions("the page", regions);
      const askMs = await timeAsk(options.bin, replay, folder);
      // The first round loads caches (the image, the page, the modules) and is not counted.
      if (round > 0) {
        samples.page.push(pageMs);
        samples.ask.push(askMs);
      }
      options.onProgress?.(`desk page round ${round}/${options.rounds}`);
    }
    return samples;
  } finally {
    await browser.close();
    if (desk.exitCode === null && desk.signalCode === null) {
      const exited = new Promise((resolve) => desk.once("exit", resolve));
      desk.kill("SIGTERM");
      await exited;
    }
    await rm(folder, { recursive: true, force: true });
  }
}

function checkRegions(where: string, regions: string[]): void {
  const expected = ["North America", "LATAM", "EMEA", "APAC"];
  if (JSON.stringify(regions) !== JSON.stringify(expected)) {
    throw new Error(
      `desk page: ${where} answered ${JSON.stringify(regions)}, not ${JSON.stringify(expected)}`,
    );
  }
}

function deskAddress(desk: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    desk.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    desk.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const found = /codeaction desk: (http\S+)/.exec(stdout);
      if (found?.[1]) resolve(found[1]);
    });
    desk.once("exit", (code) => reject(new Error(`codeaction desk exited with ${code}: ${stderr}`)));
  });
}

/** `codeaction ask --format json` with the seed replay: its wall time, once its answer is checked. */
function timeAsk(bin: string, replay: string, cwd: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const args = [
      bin,
      "ask",
      "--csv",
      orders,
      "--replay",
      replay,
      "--format",
      "json",
      "--no-journal",
      "--quiet",
    ];
    const child = spawn(process.execPath, [...args, question], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (exitCode) => {
      const wallMs = performance.now() - started;
      if (exitCode !== 0)
        return reject(new Error(`codeaction ask exited ${exitCode}: ${stderr.slice(-600)}`));
      const answer = JSON.parse(stdout) as { region: string }[];
      checkRegions(
        "codeaction ask",
        answer.map((row) => row.region),
      );
      resolve(wallMs);
    });
  });
}
