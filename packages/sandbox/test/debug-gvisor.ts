import pino from "pino";
import { SandboxManager } from "../src/index.ts";
const manager = new SandboxManager({ backend: "gvisor", memoryLimit: "256M", cpuLimit: 1, timeout: 5, pidsLimit: 64 }, { logger: pino({ level: "debug" }, pino.destination(2)) });
const session = await manager.createSession({ deadlineSeconds: 300 });
let t = Date.now();
const greedy = `python3 -c 'blocks = [bytearray(50_000_000) for _ in range(20)]; print("got 1 GB")'`;
console.log(JSON.stringify(await session.execute(greedy)).slice(0, 500), Date.now() - t);
t = Date.now();
console.log(JSON.stringify(await session.execute("cat /sys/fs/cgroup/memory/memory.oom_control; ls /sys/fs/cgroup; cat /proc/meminfo | head -3")).slice(0, 800), Date.now() - t);
const counter = `import os, time
children = 0
while True:
    try:
        if os.fork() == 0:
            time.sleep(1000)
            os._exit(0)
        children += 1
        if children % 10 == 0: print(children, flush=True)
    except OSError as error:
        print('fork failed after', children, 'children:', error, flush=True)
        time.sleep(1000)`;
t = Date.now();
console.log(JSON.stringify(await session.execute(`python3 -c "$PROGRAM"`, { env: { PROGRAM: counter }, timeout: 10 })).slice(0, 800), Date.now() - t);
await manager.cleanupAll();
