import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PathRefusedError } from "./errors/path-refused-error.ts";
import { SandboxManager } from "./manager.ts";
import type { SandboxSession } from "./session.ts";

const hostile = readFileSync(new URL("../../../examples/hostile.py", import.meta.url), "utf8");

describe.each(["docker", "gvisor"] as const)("a sandbox session (backend %s)", (backend) => {
  let manager: SandboxManager;
  let session: SandboxSession;

  beforeAll(async () => {
    process.env.OPENAI_API_KEY = "sk-test-this-must-not-cross";
    manager = new SandboxManager({ backend, network: "none" });
    session = await manager.createSession({ deadlineSeconds: 600 });
  });

  afterAll(async () => {
    delete process.env.OPENAI_API_KEY;
    const containerId = session?.containerId;
    await manager?.cleanupAll();
    if (containerId) {
      await expect(session.inspect()).rejects.toMatchObject({ statusCode: 404 });
    }
  });

  it("passes the seed's checks script: python works, not root, read-only root, writable /workspace", async () => {
    const version = await session.execute("python3 --version");
    expect(version).toMatchObject({ exitCode: 0, timedOut: false, oomKilled: false, truncated: false });
    expect(version.stdout).toMatch(/^Python 3\.11\./);

    const id = await session.execute("id");
    // Its own uid from userRange (the gid the same), as the container was created with.
    const uid = session.config.user?.split(":")[0];
    expect(Number(uid)).toBeGreaterThanOrEqual(0x7000_0000);
    expect(id.stdout).toContain(`uid=${uid} gid=${uid}`);
    expect(id.stdout).not.toMatch(/uid=0\b/);

    const touch = await session.execute("touch /usr/hello");
    expect(touch.exitCode).not.toBe(0);
    expect(touch.stderr).toMatch(/Read-only file system|Permission denied/);

    const note = await session.execute("echo hi > /workspace/note.txt && cat /workspace/note.txt");
    expect(note).toMatchObject({ exitCode: 0, stdout: "hi\n" });
  });

  it("is configured as asked, read back from docker inspect and from inside", async () => {
    const info = await session.inspect();
    const host = info.HostConfig;
    expect(host.NetworkMode).toBe("none");
    expect(host.ReadonlyRootfs).toBe(true);
    expect(host.NanoCpus).toBe(2e9);
    expect(host.Memory).toBe(4 * 1024 ** 3);
    expect(host.MemorySwap).toBe(4 * 1024 ** 3);
    expect(host.PidsLimit).toBe(256);
    expect(host.SecurityOpt).toContain("no-new-privileges");
    expect(host.CapDrop).toEqual(["ALL"]);
    expect(Object.keys(host.Tmpfs ?? {}).sort()).toEqual(["/tmp", "/var/tmp", "/workspace"]);
    expect(host.Tmpfs?.["/tmp"]).toMatch(/noexec/);
    expect(host.Tmpfs?.["/var/tmp"]).toMatch(/noexec/);
    expect(info.Mounts).toEqual([]);
    expect(info.Config.Hostname).toBe("sandbox");
    if (backend === "gvisor") expect(host.Runtime).toBe("runsc");

    const status = await session.execute("grep -E '^(CapEff|CapBnd|CapPrm|NoNewPrivs)' /proc/self/status");
    expect(status.stdout).toMatch(/CapEff:\s+0{16}/);
    expect(status.stdout).toMatch(/CapBnd:\s+0{16}/);
    if (backend === "docker") expect(status.stdout).toMatch(/NoNewPrivs:\s+1/);
    const hostname = await session.execute("hostname || cat /proc/sys/kernel/hostname");
    expect(hostname.stdout.trim()).toBe("sandbox");
  });

  it("dead-ends the seed's six escape attempts", async () => {
    await session.writeFile("/workspace/hostile.py", hostile);
    // Folders that exist on this host and not in the image: the host's home (unless it is /root,
    // which the image has too), a fresh temporary folder, and this repository.
    const hostFolder = mkdtempSync(join(tmpdir(), "codeaction-host-"));
    const hostPaths = [hostFolder, process.cwd(), ...(homedir() === "/root" ? [] : [homedir()])];
    const result = await session.execute(
      `python3 /workspace/hostile.py ${hostPaths.map((path) => `'${path}'`).join(" ")}`,
    );
    rmSync(hostFolder, { recursive: true });
    const lines = result.stdout.split("\n");
    expect(result.exitCode).toBe(0);
    expect(lines[0]).toMatch(/^1\. \/etc\/passwd starts with: root:x:0:0:/);
    expect(lines[1]).toBe("2. Host home folders visible: False");
    expect(lines[2]).toBe("3. OPENAI_API_KEY in environment: False");
    expect(lines[3]).toMatch(/^4\. Wrote to \/etc: \[Errno (30|13)\]/);
    expect(lines[4]).toMatch(
      /^5\. Network by name: .*(name resolution|Name or service not known|Errno -[235])/,
    );
    expect(lines[5]).toMatch(/^6\. Network by IP: \[Errno (101|99|113)\]/);
    expect(lines[6]).toMatch(/^7\. Network by IPv6: \[Errno (101|99|97|113)\]/);
    expect(lines[7]).toBe("8. Interfaces: lo");
    const backdoor = await session.execute("test -e /etc/profile.d/backdoor.sh");
    expect(backdoor.exitCode).toBe(1);
  });

  it("writes, reads and lists files on the read-only root, binary-safe, creating folders", async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_value, index) => (index * 7) % 256));
    await session.writeFile("/workspace/deep/folder/data.bin", bytes);
    const back = await session.readFile("/workspace/deep/folder/data.bin");
    expect(back.truncated).toBe(false);
    expect(Buffer.compare(back.content, bytes)).toBe(0);
    await session.writeFile("relative.txt", "relative to the workdir\n");
    expect((await session.readFile("/workspace/relative.txt")).content.toString()).toBe(
      "relative to the workdir\n",
    );
    await session.writeFile("/workspace/relative.txt", "replaced");
    expect((await session.readFile("relative.txt")).content.toString()).toBe("replaced");
    const capped = await session.readFile("/workspace/deep/folder/data.bin", { maxBytes: 1000 });
    expect(capped).toMatchObject({ truncated: true });
    expect(capped.content.length).toBe(1000);
    await session.writeFile("/tmp/scratch.txt", "tmp too");

    const entries = await session.listFiles("/workspace/deep/folder");
    expect(entries).toEqual([
      { name: "data.bin", path: "/workspace/deep/folder/data.bin", type: "file", size: 70_000 },
    ]);
    const top = await session.listFiles();
    expect(top.find((entry) => entry.name === "deep")?.type).toBe("directory");
    expect(top.some((entry) => entry.name.startsWith(".codeaction-write"))).toBe(false);
  });

  it("refuses paths outside /workspace and /tmp, also through links", async () => {
    for (const path of [
      "../etc/passwd",
      "/workspace2/x",
      "/etc/passwd",
      "/workspace/a\0b",
      "/workspace/../etc/x",
    ]) {
      await expect(session.readFile(path)).rejects.toSatisfy(PathRefusedError.isInstance);
      await expect(session.writeFile(path, "x")).rejects.toSatisfy(PathRefusedError.isInstance);
    }
    await session.execute("ln -sf /etc/passwd /workspace/link");
    await expect(session.readFile("/workspace/link")).rejects.toSatisfy(PathRefusedError.isInstance);
    // A folder on the way that is a link out of /workspace and /tmp: nothing is written there.
    await session.execute("ln -sfn /dev/shm /workspace/shm-link");
    const refused = await session
      .writeFile("/workspace/shm-link/x.txt", "x")
      .catch((error: unknown) => error);
    expect(PathRefusedError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toContain("/dev/shm");
    expect((await session.execute("ls -A /dev/shm")).stdout).toBe("");
    // A link that stays inside is followed: the file lands in the real folder.
    await session.execute("mkdir -p /workspace/real && ln -sfn /workspace/real /workspace/inside-link");
    await session.writeFile("/workspace/inside-link/y.txt", "y");
    expect((await session.execute("cat /workspace/real/y.txt")).stdout).toBe("y");
    await expect(session.readFile("/workspace/missing.txt")).rejects.toMatchObject({
      code: "file-not-found",
    });
  });

  it("spawns one exec with stdin attached, binary-safe, demultiplexed", async () => {
    const program = [
      "import sys",
      "data = sys.stdin.buffer.read()",
      "sys.stdout.buffer.write(bytes(reversed(data)))",
      "sys.stderr.write(f'read {len(data)} bytes')",
      "sys.exit(3)",
    ].join("\n");
    const process = session.spawn(["python3", "-I", "-c", program]);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    process.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    process.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    await process.started;
    const input = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]);
    process.stdin.end(input);
    expect(await process.exit).toEqual({ exitCode: 3 });
    expect(Buffer.concat(stdout)).toEqual(Buffer.from([...input].reverse()));
    expect(Buffer.concat(stderr).toString()).toBe("read 8 bytes");
  });

  it("says there is no network when asked to install a package, and refuses non-packages", async () => {
    const result = await session.installPackage("requests");
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("no network (network: 'none')");
    await expect(session.installPackage("x; rm -rf /")).rejects.toMatchObject({ code: "package-refused" });
    await expect(session.installPackage("--index-url=http://example.invalid x")).rejects.toMatchObject({
      code: "package-refused",
    });
  });

  it.runIf(backend === "gvisor")("runs on gVisor's kernel", async () => {
    const kernel = await session.execute("dmesg 2>&1 | head -5; cat /proc/version");
    expect(kernel.stdout).toMatch(/gVisor/);
  });

  it.runIf(backend === "docker")("runs on the host's kernel under runc (no gVisor)", async () => {
    const kernel = await session.execute("dmesg 2>&1 | head -5; cat /proc/version");
    expect(kernel.stdout).not.toMatch(/gVisor/);
  });
});
