// The library's ways to a big data file (issue 46), over the desk's CSV: a container started for the
// request with the file mounted, the same with it copied (named through a link), and a warm pool's
// container, which already exists and so gets a copy (the comparison behind poolCopyLimit). Each:
// createSession, placeFiles, the program.
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxManager, type SandboxSession } from "@codeaction/sandbox";
import { pandasProgram, writeOrders } from "./desk.ts";

const dataImage = "codeaction/python:3.11-data";

export type LibraryWays = { coldMounted: number[]; coldCopied: number[]; poolCopied: number[] };

/** One answer: a session (with the file to mount, where it may), the file placed, the program run. */
async function oneAnswer(manager: SandboxManager, path: string): Promise<{ ms: number; how: string }> {
  const started = performance.now();
  const session: SandboxSession = await manager.createSession({ mountFiles: [path] });
  try {
    const [placed] = await session.placeFiles([path]);
    const program = pandasProgram("/workspace/data/orders.csv");
    const result = await session.execute(`python3 -c '${program.replaceAll("'", `'"'"'`)}'`, {
      timeout: 120,
    });
    if (result.exitCode !== 0 || !result.stdout.includes("RESULT: ")) {
      throw new Error(`desk library: the program failed: ${result.stderr.slice(-400)}`);
    }
    return { ms: performance.now() - started, how: placed?.how ?? "none" };
  } finally {
    await session.close();
  }
}

/** `rounds` answers each way (after one uncounted round), interleaved. */
export async function measureLibraryWays(options: {
  rounds: number;
  rows: number;
  onProgress?: (message: string) => void;
}): Promise<LibraryWays> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-library-"));
  const data = join(folder, "orders.csv");
  const linked = join(folder, "linked", "orders.csv");
  const settings = { image: dataImage, network: "none" as const };
  const cold = new SandboxManager({ ...settings, pool: 0 });
  // Copies whatever the size (poolCopyLimit 1T): past the default limit a request skips the pool
  // and mounts in a container of its own, which is (m).
  const pooled = new SandboxManager({ ...settings, pool: 1, poolCopyLimit: "1T" });
  try {
    await writeOrders(data, options.rows);
    await mkdir(join(folder, "linked"));
    await symlink(data, linked);
    await Promise.all([cold.ready(), pooled.ready()]);
    const ways: LibraryWays = { coldMounted: [], coldCopied: [], poolCopied: [] };
    const expected = { coldMounted: "mounted", coldCopied: "copied", poolCopied: "copied" };
    for (let round = 0; round <= options.rounds; round += 1) {
      const answers = {
        coldMounted: await oneAnswer(cold, data),
        coldCopied: await oneAnswer(cold, linked),
        // The pool refills between rounds: wait for its warm container, as a request after a pause would.
        poolCopied: await waitWarm(pooled).then(() => oneAnswer(pooled, data)),
      };
      for (const [way, answer] of Object.entries(answers) as [
        keyof LibraryWays,
        { ms: number; how: string },
      ][]) {
        if (answer.how !== expected[way]) throw new Error(`desk library: ${way} was ${answer.how}`);
        if (round > 0) ways[way].push(answer.ms);
      }
      options.onProgress?.(`desk library round ${round}/${options.rounds}`);
    }
    return ways;
  } finally {
    await Promise.allSettled([cold.close(), pooled.close()]);
    await rm(folder, { recursive: true, force: true });
  }
}

async function waitWarm(manager: SandboxManager): Promise<void> {
  for (let waited = 0; manager.poolStatus().idle < 1; waited += 100) {
    if (waited > 60_000) throw new Error("desk library: the warm pool did not fill within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
