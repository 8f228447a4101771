import type { SandboxSession, SpawnedProcess } from "@codeaction/sandbox";
import { describe, expect, test } from "vitest";
import { backends, docker, executePython, suiteManager } from "../support/harness.ts";

// Finding 7 of the second red-team round (docs/security.md, case Q1): per-uid kernel quotas. The
// inotify instances and POSIX message-queue bytes a uid may hold are counted per uid by the host's
// kernel under runc, so sandboxes that share a uid share them: one used them up and the next got
// EMFILE. Each sandbox now runs as its own uid. Under gVisor each sandbox has its own kernel, so it
// was never shared; the case runs there too.

/**
 * Opens inotify instances and message queues until refused (at most 4096 / 64) and reports; on a line
 * from stdin reports again (one more instance: still refused while it holds them all), and waits.
 */
const exhaust = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
report = {"uid": os.getuid(), "gid": os.getgid()}
held = 0
while held < 4096 and libc.inotify_init() >= 0:
    held += 1
report["inotify"] = held
report["inotifyRefusal"] = os.strerror(ctypes.get_errno()) if held < 4096 else None
queues = 0
while queues < 64 and libc.mq_open(b"/codeaction-quota-%d" % queues, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
    queues += 1
report["queues"] = queues
report["queueRefusal"] = os.strerror(ctypes.get_errno()) if queues < 64 else None
print(json.dumps(report), flush=True)
sys.stdin.readline()
print(json.dumps({"stillHeld": len(os.listdir("/proc/self/fd")), "another": "ok" if libc.inotify_init() >= 0 else os.strerror(ctypes.get_errno())}), flush=True)
sys.stdin.read()
`;

/** One inotify instance and one message queue, each "ok" or the error. */
const probe = `
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
inotify = "ok" if libc.inotify_init() >= 0 else os.strerror(ctypes.get_errno())
queue = "ok" if libc.mq_open(b"/codeaction-probe", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0 else os.strerror(ctypes.get_errno())
print(json.dumps({"uid": os.getuid(), "inotify": inotify, "queue": queue}))
`;

type Exhausted = {
  uid: number;
  gid: number;
  inotify: number;
  inotifyRefusal: string | null;
  queues: number;
  queueRefusal: string | null;
};

/** Reads the process's reports line by line, leaving it running (its stdin stays open). */
function reportLines(process: SpawnedProcess): () => Promise<unknown> {
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let text = "";
  let stderr = "";
  process.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + String(chunk)).slice(-2000);
  });
  process.stdout.on("data", (chunk: Buffer) => {
    text += String(chunk);
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n")) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  process.stdout.on("end", () => {
    for (const waiter of waiting.splice(0)) waiter(`{"ended": ${JSON.stringify(stderr)}}`);
  });
  return async () => {
    const line = lines.shift() ?? (await new Promise<string>((resolve) => waiting.push(resolve)));
    return JSON.parse(line) as unknown;
  };
}

/** The uid the engine reports for the session's container. */
async function inspectedUid(session: SandboxSession): Promise<number> {
  const info = await (await docker()).getContainer(session.containerId).inspect();
  const [uid, gid] = info.Config.User.split(":").map(Number);
  expect(gid).toBe(uid);
  return uid!;
}

describe.each(backends)("per-uid kernel quotas (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  test("Q1: while one sandbox holds every inotify instance and message-queue byte its uid may, another still gets its own", async () => {
    const [first, second] = await Promise.all([
      manager().createSession({ deadlineSeconds: 600 }),
      manager().createSession({ deadlineSeconds: 600 }),
    ]);
    let holder: SpawnedProcess | undefined;
    try {
      holder = first.spawn(["python3", "-I", "-c", exhaust]);
      const nextReport = reportLines(holder);
      const held = (await nextReport()) as Exhausted;
      const answer = await executePython(second, probe, { timeout: 60 });
      // The first sandbox still holds them all: its program is alive, its descriptors open.
      holder.stdin.write("again\n");
      const again = (await nextReport()) as { stillHeld: number; another: string };
      expect(again.stillHeld).toBeGreaterThan(held.inotify + held.queues);
      expect(answer.exitCode, answer.stderr).toBe(0);
      const probed = JSON.parse(answer.stdout) as { uid: number; inotify: string; queue: string };
      // Each sandbox runs as its own uid, read back from the engine, never root.
      const [firstUid, secondUid] = await Promise.all([inspectedUid(first), inspectedUid(second)]);
      expect(held.uid).toBe(firstUid);
      expect(held.gid).toBe(firstUid);
      expect(probed.uid).toBe(secondUid);
      expect(firstUid).not.toBe(secondUid);
      expect(Math.min(firstUid, secondUid)).toBeGreaterThan(0);
      expect([first.config.user, second.config.user]).toEqual([
        `${firstUid}:${firstUid}`,
        `${secondUid}:${secondUid}`,
      ]);
      if (backend === "docker") {
        // runc: the host kernel's per-uid limits were reached (128 inotify instances by default; the
        // queues stop at RLIMIT_MSGQUEUE's bytes)...
        expect(held.inotifyRefusal).toBe("Too many open files");
        expect(held.queueRefusal).toBe("Too many open files");
        expect(held.queues).toBeLessThan(64);
        expect(again.another).toBe("Too many open files");
      }
      // ...and the other sandbox still gets its own.
      expect(probed).toMatchObject({ inotify: "ok", queue: "ok" });
    } finally {
      holder?.stdin.end();
      await Promise.all([first.close(), second.close()]);
    }
  });
});
