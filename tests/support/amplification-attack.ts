/**
 * The argument amplification attack of issue 29 (finding 9), as a hostile model would write it:
 * `threads` threads at once, each sending `[{}] * copies` to the echo tool (at 262000, 1 MiB of
 * text that parses into about 21 times as much). It prints, as JSON, how many calls ended each way:
 * "ok", or the exception's type and the start of its message. The security test and the benchmark
 * (bench/hostile-programs.ts) run this one program.
 */
export function amplificationAttack(options: { copies?: number; threads?: number } = {}): string {
  const { copies = 262000, threads = 150 } = options;
  return `
import json, threading
from codeaction_tools import _call
outcomes = {}
lock = threading.Lock()
def send():
    try:
        _call("echo", {"value": [{}] * ${copies}})
        key = "ok"
    except Exception as error:
        key = type(error).__name__ + ": " + str(error)[:160]
    with lock:
        outcomes[key] = outcomes.get(key, 0) + 1
threads = [threading.Thread(target=send) for _ in range(${threads})]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("RESULT:", json.dumps(outcomes))
`;
}
