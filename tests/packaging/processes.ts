import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";

// A process started under a wrapper (npx, a shell) as the machine sees it: found from /proc by its
// ancestry and command line, and told apart from a later process given the same pid by its start time.

/** A process: its pid and its start time (/proc/<pid>/stat field 22, clock ticks after boot). */
export type ProcessIdentity = { pid: number; start: string };

/** The parent pid and start time of `pid` from /proc/<pid>/stat; undefined when it has ended (a zombie too). */
async function statOf(pid: number): Promise<{ parent: number; start: string } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count from the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z") return undefined;
  return { parent: Number(fields[1]), start: fields[19] ?? "" };
}

/** The live descendants of `root` (children, grandchildren, ...), from /proc. */
async function descendantsOf(root: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await statOf(Number(entry));
    if (stat) children.set(stat.parent, [...(children.get(stat.parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [root]; queue.length > 0; ) {
    const next = queue.flatMap((pid) => children.get(pid) ?? []);
    found.push(...next);
    queue = next;
  }
  return found;
}

/**
 * The `codeaction desk` process under the wrapper `root` (its argv: node, the installed bin,
 * `desk`), once `output()` shows the desk's address; rejects after 120 s.
 */
export async function deskProcessUnder(root: number, output: () => string): Promise<ProcessIdentity> {
  for (let waited = 0; waited < 120_000; waited += 100) {
    if (/codeaction desk: http/.test(output())) {
      for (const pid of await descendantsOf(root)) {
        const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0");
        const stat = await statOf(pid);
        if (argv[1]?.endsWith("/node_modules/.bin/codeaction") && argv[2] === "desk" && stat)
          return { pid, start: stat.start };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no codeaction desk listened under pid ${root}:\n${output()}`);
}

/** Whether `process` (that pid with that start time) has ended, waiting at most `milliseconds`. */
export async function endsWithin(process: ProcessIdentity, milliseconds: number): Promise<boolean> {
  const ended = async () => (await statOf(process.pid))?.start !== process.start;
  for (let waited = 0; waited < milliseconds && !(await ended()); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return ended();
}

/** The containers (any state) `owner` created: by the owner labels its sandbox manager sets. */
export function containersOf(owner: ProcessIdentity): Promise<string[]> {
  const filters = [`label=codeaction.owner-pid=${owner.pid}`, `label=codeaction.owner-start=${owner.start}`];
  const args = ["ps", "-aq", ...filters.flatMap((filter) => ["--filter", filter])];
  return new Promise((resolve, reject) => {
    execFile("docker", args, (error, stdout) =>
      error ? reject(error) : resolve(stdout.split("\n").filter(Boolean)),
    );
  });
}
