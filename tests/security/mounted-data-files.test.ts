import {
  chmodSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FilePlacementError, parseSandboxConfig, type SandboxSession } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildLabels } from "../../packages/sandbox/src/container/labels.ts";
import { launchContainer } from "../../packages/sandbox/src/container/launch.ts";
import { inspectSandboxImage } from "../../packages/sandbox/src/container/readiness.ts";
import { allocateIdentity } from "../../packages/sandbox/src/container/user-ids.ts";
import { teardownContainer } from "../../packages/sandbox/src/engine/engine-operations.ts";
import { filesToPlace } from "../../packages/sandbox/src/files/placement-path.ts";
import {
  backends,
  docker,
  executePython,
  hostileMarker,
  runAgentCase,
  suiteManager,
} from "../support/harness.ts";

// Data files bind-mounted read-only (issue 46), attacked from inside: a write through the mount
// fails, nothing of the host beside the file is visible (the folder's listing, the mount table), a
// link swapped in between the check and the mount is never handed to a program, a link named by the
// caller is copied, not mounted, and a program reads the same bytes either way.

const rows = "region,amount\nnorth,3\nsouth,4\n";

let folder: string;
let dataPath: string;
let secretPath: string;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), "codeaction-mount-"));
  dataPath = join(folder, "sales.csv");
  secretPath = join(folder, `${hostileMarker}-secret.txt`);
  writeFileSync(dataPath, rows);
  // Writable and listable by anyone on the host: only the mount's "ro" (and its single file) stop a
  // program, not the host's permissions (the tests may run as root).
  chmodSync(folder, 0o755);
  chmodSync(dataPath, 0o666);
  // Beside the data file, in the same host folder: no program may see it.
  writeFileSync(secretPath, "the host's secret, never to be seen\n");
});

afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** What a program sees of /workspace/data and the mount table, and what a write does. */
const probe = `
import errno, json, os
def attempt(action):
    try:
        action()
        return "done"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
path = "/workspace/data/sales.csv"
def append():
    with open(path, "a") as file:
        file.write("${hostileMarker}\\n")
mounts = [line.split() for line in open("/proc/self/mountinfo")]
print("RESULT:", json.dumps({
    "listing": sorted(os.listdir("/workspace/data")),
    "content": open(path).read(),
    "append": attempt(append),
    "truncate": attempt(lambda: os.truncate(path, 0)),
    "chmod": attempt(lambda: os.chmod(path, 0o666)),
    "unlink": attempt(lambda: os.unlink(path)),
    "create": attempt(lambda: open("/workspace/data/${hostileMarker}.txt", "w").close()),
    "beside": attempt(lambda: open(path + "/../${hostileMarker}-secret.txt").read()),
    "under_workspace": sorted([m[4], m[5].split(",")[0], m[m.index("-") + 1]] for m in mounts if m[4].startswith("/workspace")),
    "host_roots": sorted([m[3], m[4]] for m in mounts if m[3].startswith(${JSON.stringify("/tmp/")})),
}))
`;

type Probe = {
  listing: string[];
  content: string;
  append: string;
  truncate: string;
  chmod: string;
  unlink: string;
  create: string;
  beside: string;
  under_workspace: [string, string, string][];
  host_roots: [string, string][];
};

async function probeSession(session: SandboxSession): Promise<Probe> {
  const run = await executePython(session, probe);
  expect(run.exitCode, run.stderr).toBe(0);
  const line = run.stdout.split("\n").find((text) => text.startsWith("RESULT:"));
  return JSON.parse(line!.slice("RESULT:".length)) as Probe;
}

describe.each(backends)("mounted data files (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  test("the mounted file is read-only, alone in /workspace/data, and the only host file in the mount table", async () => {
    const session = await manager().createSession({ mountFiles: [dataPath] });
    try {
      const placed = await session.placeFiles([dataPath]);
      expect(placed).toEqual([
        { containerPath: "/workspace/data/sales.csv", bytes: rows.length, how: "mounted" },
      ]);
      const seen = await probeSession(session);
      expect(seen.listing).toEqual(["sales.csv"]);
      expect(seen.content).toBe(rows);
      for (const outcome of [seen.append, seen.truncate, seen.chmod])
        expect(["EROFS", "EACCES", "EPERM"]).toContain(outcome);
      // The mount point cannot be removed (runc: EBUSY or EACCES; gVisor says EISDIR).
      expect(seen.unlink).not.toBe("done");
      expect(seen.beside).toBe("ENOTDIR");
      // Its folder is sealed as the copies leave it: nothing new beside the file.
      expect(seen.create).toBe("EACCES");
      // Under /workspace: the two tmpfs folders (the data folder is the sandbox user's own), and the
      // one file, read-only: no folder of the host.
      const tmpfs = seen.under_workspace.filter(([, , type]) => type === "tmpfs").map(([point]) => point);
      expect(tmpfs).toEqual(["/workspace", "/workspace/data"]);
      const fromHost = seen.under_workspace.filter(([, , type]) => type !== "tmpfs");
      expect(fromHost.map(([point, options]) => [point, options])).toEqual([
        ["/workspace/data/sales.csv", "ro"],
      ]);
      // runc names the host path a mount comes from: only the file itself (gVisor shows "/" for each).
      if (backend === "docker") expect(seen.host_roots).toEqual([[dataPath, "/workspace/data/sales.csv"]]);
      expect(readFileSync(dataPath, "utf8")).toBe(rows);
    } finally {
      await session.close();
    }
  });

  test("a program reads the same bytes mounted and copied", async () => {
    const read = `import hashlib\nprint(hashlib.sha256(open("/workspace/data/sales.csv","rb").read()).hexdigest())`;
    const mounted = await manager().createSession({ mountFiles: [dataPath] });
    const copied = await manager().createSession();
    try {
      const [mountedPlaced] = await mounted.placeFiles([dataPath]);
      const [copiedPlaced] = await copied.placeFiles([dataPath]);
      expect([mountedPlaced?.how, copiedPlaced?.how]).toEqual(["mounted", "copied"]);
      const [first, second] = await Promise.all([executePython(mounted, read), executePython(copied, read)]);
      expect(first.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
      expect(first.stdout).toBe(second.stdout);
    } finally {
      await Promise.all([mounted.close(), copied.close()]);
    }
  });

  test("a code-action turn: its own container mounts the data file, the warm pool's copies it (past poolCopyLimit the turn mounts it in its own), one answer", async () => {
    const program = [
      "import json",
      'mounted = any(line.split()[4] == "/workspace/data/sales.csv" for line in open("/proc/self/mountinfo"))',
      'rows = open("/workspace/data/sales.csv").read().splitlines()[1:]',
      'print("RESULT: " + json.dumps({"mounted": mounted, "total": sum(int(row.split(",")[1]) for row in rows)}))',
    ].join("\n");
    const answers = [];
    for (const sandbox of [{ pool: 0 }, { pool: 1 }, { pool: 1, poolCopyLimit: 0 }]) {
      const outcome = await runAgentCase({
        backend,
        programs: [program],
        codeAction: { dataFiles: [dataPath] },
        sandbox,
      });
      expect(outcome.error).toBeUndefined();
      answers.push(JSON.parse(outcome.result?.attempts[0]?.result ?? "{}"));
    }
    expect(answers).toEqual([
      { mounted: true, total: 7 },
      { mounted: false, total: 7 },
      { mounted: true, total: 7 },
    ]);
  });

  test("a link named by the caller is copied, not mounted", async () => {
    const linkPath = join(folder, "linked.csv");
    symlinkSync(dataPath, linkPath);
    const session = await manager().createSession({ mountFiles: [linkPath] });
    try {
      const info = await (await docker()).getContainer(session.containerId).inspect();
      expect(info.Mounts).toEqual([]);
      expect(await session.placeFiles([linkPath])).toEqual([
        { containerPath: "/workspace/data/linked.csv", bytes: rows.length, how: "copied" },
      ]);
    } finally {
      await session.close();
      unlinkSync(linkPath);
    }
  });

  test("a link swapped in between the check and the mount is refused before any program runs", async () => {
    const swapped = join(folder, `swapped-${backend}.csv`);
    writeFileSync(swapped, rows);
    let swaps = 0;
    const config = parseSandboxConfig({ backend, network: "none" });
    const identity = allocateIdentity(config);
    const client = await docker();
    const image = await inspectSandboxImage(client, config.image);
    const runLabel = `mount-race-${process.pid}-${backend}`;
    const deadline = new Date(Date.now() + 600_000);
    const labels = { ...buildLabels({ managerId: runLabel, deadline }), "codeaction-test.run": runLabel };
    const swap = async () => {
      // The checked file becomes a link to the secret beside it: the engine would follow it.
      unlinkSync(swapped);
      symlinkSync(secretPath, swapped);
      swaps += 1;
    };
    try {
      const launching = launchContainer(client, identity.config, {
        labels,
        deadline,
        imageEnv: image.Config?.Env ?? [],
        mountFiles: filesToPlace([swapped]),
        afterMountCheck: swap,
      });
      const outcome = await launching.then(
        async (launched) => {
          await teardownContainer(launched);
          return launched;
        },
        (error: unknown) => error,
      );
      expect(swaps).toBe(1);
      expect(
        FilePlacementError.isInstance(outcome),
        outcome instanceof Error ? outcome.message : "launched",
      ).toBe(true);
      // Both checks saw it: the container's listing (what was mounted) and the host path.
      expect(String(outcome)).toContain("is not the file that was checked");
      expect(String(outcome)).toContain("was replaced on the host after its check");
      // The launch removed its container.
      const left = await client.listContainers({
        all: true,
        filters: { label: [`codeaction-test.run=${runLabel}`] },
      });
      expect(left).toEqual([]);
      expect(statSync(secretPath).size).toBeGreaterThan(0);
    } finally {
      identity.release();
    }
  });
});
