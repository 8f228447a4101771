import { SandboxManager } from "../src/index.ts";
const backend = process.argv[2] as "docker" | "gvisor";
import pino from "pino";
const manager = new SandboxManager({ backend, pidsLimit: 64 }, { logger: pino({ level: "debug" }, pino.destination(2)) });
const session = await manager.createSession({ deadlineSeconds: 300 });
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
let t = Date.now();
const r = await session.execute(`python3 -c "$PROGRAM"`, { env: { PROGRAM: counter }, timeout: 10 });
console.log(JSON.stringify(r).slice(0, 600), Date.now() - t);
t = Date.now();
console.log(JSON.stringify(await session.execute("echo after")), Date.now() - t);
t = Date.now();
const bomb = await session.execute("bomb() { bomb | bomb & }; bomb; sleep 1000", { timeout: 5 });
console.log(JSON.stringify(bomb).slice(0, 600), Date.now() - t);
t = Date.now();
console.log(JSON.stringify(await session.execute("echo after")), Date.now() - t);
console.log((await session.inspect()).HostConfig.PidsLimit);
await manager.cleanupAll();
