import { amplificationAttack } from "../tests/support/amplification-attack.ts";

/**
 * The attack classes of issue 18, as the programs a hostile model would write. Each ends by itself:
 * the host ends it (tool-limit), its execTimeout does, or it finishes.
 */
export const hostileAttacks = {
  /**
   * The real attack of issue 29: 150 threads, each sending `[{}] * 262000` (1 MiB of text that
   * parses into about 21 times as much) to the echo tool at once.
   */
  "argument amplification": amplificationAttack(),
  /** A tool that returns 17 MiB (over the bridge's 16 MiB answer limit), called 20 times. */
  "oversized results": `
refused = 0
for index in range(20):
    try:
        oversized()
    except Exception:
        refused += 1
print("RESULT:", refused)
`,
  /** The doorbell rung with valid ids and no request files, as fast as the program can. */
  "doorbell flood": `
import itertools, os
fd = int(os.environ["CODEACTION_REQUEST_FD"])
for index in itertools.count():
    os.write(fd, b"ring%d\\n" % index)
`,
  /** 64 MiB of forged answers written to every descriptor of the kill helper that opens. */
  "kill-helper flood": `
import os
chunk = b"killed 0 survivors 0\\n" * 4096
opened = 0
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    try:
        with open("/proc/%s/cmdline" % name, "rb") as file:
            if b"codeaction-kill-helper" not in file.read():
                continue
    except OSError:
        continue
    for fd in ("0", "1", "2"):
        try:
            target = os.open("/proc/%s/fd/%s" % (name, fd), os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        opened += 1
        written = 0
        try:
            while written < 64 * 1024 * 1024:
                written += os.write(target, chunk)
        except OSError:
            pass
        os.close(target)
print("RESULT:", opened)
`,
  /** 1 GiB to each of PID 1's stdout and stderr (Docker's container log, were there one). */
  "log flood (/proc/1/fd/1)": `
import os
written = {}
for fd in ("1", "2"):
    try:
        target = os.open("/proc/1/fd/" + fd, os.O_WRONLY)
    except OSError as error:
        written[fd] = error.strerror
        continue
    total = 0
    block = b"x" * (1024 * 1024)
    try:
        while total < 1024 ** 3:
            total += os.write(target, block)
    except OSError as error:
        written[fd + " error"] = error.strerror
    written[fd] = total
print("RESULT:", written)
`,
  /** The program's own stdout and stderr written without end, until its time is up. */
  "output flood": `
import os
block = b"x" * 65536
while True:
    os.write(1, block)
    os.write(2, block)
`,
  /**
   * The worst tree for reading back /workspace/out: files up to the limits (20 of 2.5 MiB, 50 MiB in
   * all), 45 x 45 folders (over the cap of 1,000 folders) and 20,000 empty files (over the cap of
   * 10,000 entries); before issue 29 this cost one exec per folder (90 s and more).
   */
  "output collection for the worst tree": `
import os
out = "/workspace/out"
os.makedirs(out, exist_ok=True)
block = b"x" * (5 * 1024 * 512)
for index in range(20):
    with open("%s/a%02d.bin" % (out, index), "wb") as file:
        file.write(block)
for outer in range(45):
    for inner in range(45):
        os.makedirs("%s/f%02d/g%02d" % (out, outer, inner), exist_ok=True)
os.makedirs(out + "/many", exist_ok=True)
for index in range(20000):
    open("%s/many/e%05d" % (out, index), "wb").close()
print("RESULT: made")
`,
} as const;

export type HostileAttack = keyof typeof hostileAttacks;
