import { readFileSync } from "node:fs";
import { NetworkSetupError, type SandboxManager } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { labelKeys } from "../../packages/sandbox/src/container/labels.ts";
import { backends, fakeSecret, readyManager, resultJson, runCase } from "../support/harness.ts";
import { pythonPrelude } from "../support/python.ts";

// Catalogue N1..N7 (network "none") and I1..I3 (information). Only reserved names and addresses
// are aimed at (example.invalid, 192.0.2.1, 2001:db8::1); the container's own state (interfaces,
// routes) is read instead of probing anything else.

type Outcomes = Record<string, unknown>;

describe.each(backends)("network and information (backend %s)", (backend) => {
  let manager: SandboxManager;
  beforeAll(async () => {
    manager = await readyManager(backend, { env: { TEAM: "blue" } });
  });
  afterAll(async () => {
    await manager?.close();
  });

  const probe = async (body: string): Promise<Outcomes> =>
    resultJson<Outcomes>(await runCase(manager, { program: `${pythonPrelude}\n${body}` }));

  // How fast it fails is measured by the benchmark (bench/fail-fast.ts), not asserted here.
  test("N1: resolving example.invalid fails (no resolver reachable)", async () => {
    const outcome = await probe(`
try:
    socket.getaddrinfo("example.invalid", 80)
    answer = "resolved"
except socket.gaierror as error:
    answer = "gaierror %d" % error.errno
print("RESULT:", json.dumps({"answer": answer}))
`);
    expect(outcome.answer).toMatch(/^gaierror/);
  });

  test("N2, N3: TCP and UDP to 192.0.2.1 and TCP to 2001:db8::1 are unreachable", async () => {
    const outcome = await probe(`
def connect(family, address):
    connection = socket.socket(family, socket.SOCK_STREAM)
    connection.settimeout(3)
    return attempt(lambda: connection.connect(address))
def send(family, address):
    return attempt(lambda: socket.socket(family, socket.SOCK_DGRAM).sendto(b"x", address))
print("RESULT:", json.dumps({
    "tcp": connect(socket.AF_INET, ("192.0.2.1", 80)), "udp": send(socket.AF_INET, ("192.0.2.1", 53)),
    "tcp6": connect(socket.AF_INET6, ("2001:db8::1", 80)), "udp6": send(socket.AF_INET6, ("2001:db8::1", 53)),
}))
`);
    for (const [name, value] of Object.entries(outcome)) {
      // runc's kernel says ENETUNREACH; gVisor's netstack says EHOSTUNREACH. Never a connection.
      expect(["ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "EAFNOSUPPORT"], name).toContain(value);
    }
  });

  test("N4: the only interface is lo and no route leaves it", async () => {
    const outcome = await probe(`
def read(path):
    try:
        return open(path).read()
    except OSError as error:
        return None
print("RESULT:", json.dumps({
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "dev": read("/proc/net/dev"), "route": read("/proc/net/route"), "route6": read("/proc/net/ipv6_route"),
}))
`);
    expect(outcome.interfaces).toEqual(["lo"]);
    const devices = String(outcome.dev ?? "")
      .split("\n")
      .slice(2)
      .map((line) => line.split(":")[0]!.trim())
      .filter(Boolean);
    if (outcome.dev !== null) expect(devices).toEqual(["lo"]);
    if (outcome.route !== null) expect(String(outcome.route).trim().split("\n").slice(1)).toEqual([]);
    const routes6 = String(outcome.route6 ?? "")
      .split("\n")
      .filter(Boolean)
      .map((line) => line.trim().split(/\s+/).at(-1));
    expect(routes6.filter((device) => device !== "lo")).toEqual([]);
  });

  test("N5: the Docker and containerd sockets are absent", async () => {
    const outcome = await probe(`
paths = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock", "/run/runc", "/var/lib/docker"]
print("RESULT:", json.dumps({"present": [path for path in paths if os.path.exists(path)]}))
`);
    expect(outcome.present).toEqual([]);
  });

  test("N6: adding a link or a route over netlink is refused; the interfaces stay as they were", async () => {
    const outcome = await probe(`
import struct
def netlink(message_type, flags, body):
    connection = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    header = struct.pack("=IHHII", 16 + len(body), message_type, flags, 1, 0)
    connection.send(header + body)
    reply = connection.recv(65536)
    length, kind = struct.unpack("=IH", reply[:6])
    if kind == 2:  # NLMSG_ERROR
        code = struct.unpack("=i", reply[16:20])[0]
        return "ok" if code == 0 else errno.errorcode.get(-code, str(code))
    return "reply %d" % kind
def attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\\0" * ((4 - length % 4) % 4)
REQUEST, ACK, EXCL, CREATE = 1, 4, 0x200, 0x400
link_info = attribute(18, attribute(1, b"dummy\\0"))
new_link = struct.pack("=BxHiII", 0, 0, 0, 0, 0) + attribute(3, b"hostile0\\0") + link_info
route = struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 3, 0, 1, 0) + attribute(5, socket.inet_aton("192.0.2.1")) + attribute(4, struct.pack("=i", 1))
address = struct.pack("=BBBBi", socket.AF_INET, 24, 0, 0, 1) + attribute(2, socket.inet_aton("192.0.2.2"))
print("RESULT:", json.dumps({
    "link": attempt(lambda: netlink(16, REQUEST | ACK | EXCL | CREATE, new_link)),
    "route": attempt(lambda: netlink(24, REQUEST | ACK | EXCL | CREATE, route)),
    "address": attempt(lambda: netlink(20, REQUEST | ACK | EXCL | CREATE, address)),
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
}))
`);
    for (const name of ["link", "route", "address"]) {
      if (backend === "docker") expect(outcome[name], name).toBe("EPERM");
      else expect(outcome[name], name).not.toBe("ok");
    }
    expect(outcome.interfaces).toEqual(["lo"]);
  });

  test("N7: network restricted refuses names off the allow-list and allowed names that resolve to loopback", async () => {
    const restricted = await readyManager(backend, { network: { allow: ["localhost"] } }).catch(
      (error: Error) => error,
    );
    if (restricted instanceof Error) {
      // This machine's runsc only starts with its own networking off (--network=none): the manager
      // refuses an allow-list under it before any container exists, naming why. Nothing to reach.
      expect(backend).toBe("gvisor");
      expect(NetworkSetupError.isInstance(restricted)).toBe(true);
      expect((restricted as NetworkSetupError).step).toBe("runtime");
      expect(restricted.message).toContain("registered with --network=none");
      return;
    }
    const session = await restricted.createSession({ deadlineSeconds: 120 });
    try {
      const result = await session.execute(
        `python3 -I -c 'import os, urllib.request
for url in ["http://example.invalid/", "http://localhost:9/"]:
    try:
        urllib.request.urlopen(url, timeout=10)
        print(url, "reached")
    except Exception as error:
        print(url, "refused", type(error).__name__, getattr(error, "code", ""))'`,
        // NO_PROXY emptied: the allowed name "localhost" goes to the proxy too, which must refuse it.
        { timeout: 60, env: { NO_PROXY: "", no_proxy: "" } },
      );
      console.info(`[N7 ${backend}] ${result.stdout.trim().replaceAll("\n", "; ")} ${result.stderr.trim()}`);
      expect(result.stdout).not.toMatch(/reached/);
      expect(result.stdout.match(/refused/g)).toHaveLength(2);
      if (backend === "docker") {
        // The proxy itself answers: a refusal (HTTP 403), not a failure to connect anywhere.
        expect(result.stdout).toMatch(/example\.invalid\/ refused HTTPError 403/);
        expect(result.stdout).toMatch(/localhost:9\/ refused HTTPError 403/);
      }
    } finally {
      await session.close();
      await restricted.close();
    }
  });

  test("I1: the environment and /proc/1/environ hold only the configured variables", async () => {
    const outcome = await probe(`
def environ(pid):
    try:
        return sorted(entry.decode(errors="replace") for entry in open(f"/proc/{pid}/environ", "rb").read().split(b"\\0") if entry)
    except OSError as error:
        return [errno.errorcode[error.errno]]
everything = b""
for name in os.listdir("/proc"):
    if name.isdigit():
        for part in ("environ", "cmdline"):
            try:
                everything += open(f"/proc/{name}/{part}", "rb").read()
            except OSError:
                pass
print("RESULT:", json.dumps({"mine": sorted(f"{key}={value}" for key, value in os.environ.items()),
                            "pid1": environ(1), "everything": everything.decode(errors="replace")}))
`);
    const allowed = new Set([
      "HOME",
      "PATH",
      "LANG",
      "HOSTNAME",
      "PWD",
      "PYTHONPATH",
      "PYTHONDONTWRITEBYTECODE",
      "PYTHONUNBUFFERED",
      // Fixed by the relay for the program's interpreter (durable runs: set orders repeat).
      "PYTHONHASHSEED",
      "TEAM",
      "CODEACTION_EXEC_ID",
      "CODEACTION_BRIDGE_DIR",
      "CODEACTION_REQUEST_FD",
      "CODEACTION_REPLY_FD",
    ]);
    const mine = outcome.mine as string[];
    expect(mine.map((entry) => entry.split("=")[0]).filter((name) => !allowed.has(name!))).toEqual([]);
    expect(mine).toContain("TEAM=blue");
    const pid1 = outcome.pid1 as string[];
    expect(
      pid1.map((entry) => entry.split("=")[0]).filter((name) => !allowed.has(name!) && name !== "EACCES"),
    ).toEqual([]);
    expect(String(outcome.everything)).not.toContain(fakeSecret);
    for (const name of [
      "CODEACTION_SECURITY_FAKE_API_KEY",
      "OPENAI_API_KEY",
      "DOCKER_HOST",
      "SSH_AUTH_SOCK",
    ]) {
      expect(
        mine.some((entry) => entry.startsWith(`${name}=`)),
        name,
      ).toBe(false);
    }
  });

  test("I2: the hostname is neutral and /etc/hosts does not name the host", async () => {
    const { hostname } = await import("node:os");
    const outcome = await probe(`
print("RESULT:", json.dumps({"hostname": socket.gethostname(), "hosts": open("/etc/hosts").read(),
                            "etcHostname": open("/etc/hostname").read() if os.path.exists("/etc/hostname") else ""}))
`);
    expect(outcome.hostname).toBe("sandbox");
    if (hostname() !== "sandbox") {
      expect(String(outcome.hosts)).not.toContain(hostname());
      expect(String(outcome.etcHostname)).not.toContain(hostname());
    }
  });

  test("I4: the host's boot arguments, kernel configuration, modules and interrupts are hidden", async () => {
    const outcome = await probe(`
def read(path):
    try:
        return open(path, "rb").read()[:4096].decode(errors="replace")
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
print("RESULT:", json.dumps({path: read(path) for path in ["/proc/cmdline", "/proc/config.gz", "/proc/modules", "/proc/interrupts"]}))
`);
    const hostCommandLine = readFileSync("/proc/cmdline", "utf8").trim();
    // runc: each is /dev/null (empty). gVisor: its own kernel's files, which never hold the host's.
    expect(hostCommandLine.length).toBeGreaterThan(0);
    expect(String(outcome["/proc/cmdline"])).not.toContain(hostCommandLine);
    for (const path of ["/proc/config.gz", "/proc/modules"]) {
      expect(["", "ENOENT"], path).toContain(outcome[path]);
    }
    if (backend === "docker") expect(outcome["/proc/interrupts"]).toBe("");
  });

  test("I3: the container's labels and PID 1's command line hold no secrets", async () => {
    let labels: Record<string, string> = {};
    let entrypoint: string[] = [];
    const run = await runCase(manager, {
      program: `import json
print("RESULT:", json.dumps({"pid1": open("/proc/1/cmdline", "rb").read().decode(errors="replace").split("\\0")}))`,
      after: async (session) => {
        const info = await session.inspect();
        labels = info.Config.Labels ?? {};
        entrypoint = [...(info.Config.Entrypoint ?? []), ...(info.Config.Cmd ?? [])] as string[];
      },
    });
    const outcome = resultJson<{ pid1: string[] }>(run);
    // The sandbox's own labels (owner, deadline, manager) plus whatever the image itself declares.
    expect(Object.keys(labels)).toEqual(expect.arrayContaining(Object.values(labelKeys)));
    const everything = JSON.stringify({ labels, entrypoint, pid1: outcome.pid1 });
    expect(everything).not.toContain(fakeSecret);
    expect(everything).not.toMatch(/sk-|api[_-]?key|password|token/i);
    // PID 1 is the entrypoint itself (the sandbox's init), with no docker-init in front.
    expect((outcome.pid1 as string[]).filter(Boolean)).toEqual(entrypoint.filter(Boolean));
  });
});
