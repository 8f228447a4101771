import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Loopback front ends for the local engine, started by the tests: a TLS listener that checks client
// certificates (stunnel) and sshd with a key made here. Both reach /var/run/docker.sock.

const dockerSocket = "/var/run/docker.sock";

function requireTool(path: string, name: string): void {
  if (!existsSync(path)) {
    throw new Error(
      `${name} is missing (${path}): run scripts/setup-tests.sh as root (scripts/test.sh does), which installs stunnel4 and openssh-server`,
    );
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let tries = 0; tries < 200; tries += 1) {
    if (child.exitCode !== null) throw new Error(`the front end exited (${child.exitCode}): ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after 20 s: ${log()}`);
}

/** A new P-256 key, unencrypted, into `keyFile`. */
const newKey = (keyFile: string) => [
  "-newkey",
  "ec",
  "-pkeyopt",
  "ec_paramgen_curve:prime256v1",
  "-nodes",
  "-keyout",
  keyFile,
];

/** Starts a front end and resolves once it listens on `port`; its stderr is kept (the last 20,000 characters). */
async function startListening(
  command: string,
  args: string[],
  port: number,
): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log = (log + String(chunk)).slice(-20_000);
  });
  await waitForPort(port, child, () => log);
  return { child, log: () => log };
}

function openssl(folder: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: folder, stdio: "pipe" });
}

/** A CA, and a certificate it signs (`name`.pem and `name`-key.pem). */
function signedCertificate(
  folder: string,
  ca: string,
  name: string,
  subject: string,
  extension: string,
): void {
  writeFileSync(join(folder, `${name}.ext`), `${extension}\n`);
  openssl(folder, "req", ...newKey(`${name}-key.pem`), "-out", `${name}.csr`, "-subj", subject);
  openssl(
    folder,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}-key.pem`,
    "-CAcreateserial",
    "-days",
    "2",
    "-out",
    `${name}.pem`,
    "-extfile",
    `${name}.ext`,
  );
}

function certificateAuthority(folder: string, name: string): void {
  openssl(
    folder,
    "req",
    "-x509",
    ...newKey(`${name}-key.pem`),
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
  );
}

/** Copies a client certificate into a DOCKER_CERT_PATH-style folder (ca.pem, cert.pem, key.pem). */
function certificateFolder(folder: string, name: string, client: string, ca: string): string {
  const target = join(folder, name);
  mkdirSync(target);
  writeFileSync(join(target, "ca.pem"), readFileSync(join(folder, `${ca}.pem`)));
  writeFileSync(join(target, "cert.pem"), readFileSync(join(folder, `${client}.pem`)));
  writeFileSync(join(target, "key.pem"), readFileSync(join(folder, `${client}-key.pem`)));
  return target;
}

export type TlsFront = {
  port: number;
  host: string;
  /** ca.pem, cert.pem, key.pem of a client the front trusts. */
  goodCertPath: string;
  /** A client certificate from another CA (refused). */
  rogueCertPath: string;
  /** Only ca.pem: no client certificate at all. */
  caOnlyPath: string;
  /** What stunnel logged (its last 20,000 characters): the certificates it rejected. */
  log: () => string;
  stop: () => void;
};

/** The local engine behind stunnel on a loopback port, requiring a client certificate from its CA. */
export async function startTlsFront(): Promise<TlsFront> {
  requireTool("/usr/bin/stunnel4", "stunnel4");
  const folder = mkdtempSync(join(tmpdir(), "codeaction-tls-"));
  certificateAuthority(folder, "ca");
  certificateAuthority(folder, "rogue-ca");
  signedCertificate(
    folder,
    "ca",
    "server",
    "/CN=127.0.0.1",
    "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth",
  );
  signedCertificate(folder, "ca", "client", "/CN=client", "extendedKeyUsage=clientAuth");
  signedCertificate(folder, "rogue-ca", "rogue", "/CN=rogue", "extendedKeyUsage=clientAuth");
  const port = await freePort();
  writeFileSync(
    join(folder, "stunnel.conf"),
    [
      "foreground = yes",
      "pid =",
      "debug = 4",
      "[docker]",
      `accept = 127.0.0.1:${port}`,
      `connect = ${dockerSocket}`,
      `cert = ${join(folder, "server.pem")}`,
      `key = ${join(folder, "server-key.pem")}`,
      `CAfile = ${join(folder, "ca.pem")}`,
      "verifyChain = yes",
      "requireCert = yes",
      "",
    ].join("\n"),
  );
  const caOnlyPath = join(folder, "ca-only");
  mkdirSync(caOnlyPath);
  writeFileSync(join(caOnlyPath, "ca.pem"), readFileSync(join(folder, "ca.pem")));
  const { child, log } = await startListening("/usr/bin/stunnel4", [join(folder, "stunnel.conf")], port);
  return {
    port,
    host: `tcp://127.0.0.1:${port}`,
    goodCertPath: certificateFolder(folder, "good", "client", "ca"),
    rogueCertPath: certificateFolder(folder, "bad", "rogue", "ca"),
    caOnlyPath,
    log,
    stop: () => {
      child.kill("SIGKILL");
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

export type SshFront = {
  port: number;
  host: string;
  identityFile: string;
  /** A key sshd does not accept. */
  strangerIdentityFile: string;
  knownHostsFile: string;
  /** known_hosts naming another key for this host. */
  wrongKnownHostsFile: string;
  stop: () => void;
};

function sshKey(folder: string, name: string): string {
  const path = join(folder, name);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path], { stdio: "pipe" });
  return path;
}

/** The login user scripts/setup-tests.sh creates: in the docker group, with a plain shell (root's may be slow to start). */
export const remoteUser = "codeaction-remote";

/** The local engine behind sshd on a loopback port (`remoteUser` logs in with a key made here). */
export async function startSshFront(): Promise<SshFront> {
  requireTool("/usr/sbin/sshd", "sshd");
  try {
    execFileSync("id", [remoteUser], { stdio: "pipe" });
  } catch {
    throw new Error(
      `the user ${remoteUser} does not exist: run scripts/setup-tests.sh as root (scripts/test.sh does), which creates it`,
    );
  }
  const folder = mkdtempSync(join(tmpdir(), "codeaction-ssh-"));
  // sshd reads authorized_keys as the login user.
  chmodSync(folder, 0o755);
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const hostKey = sshKey(folder, "host_key");
  const otherHostKey = sshKey(folder, "other_host_key");
  const identityFile = sshKey(folder, "client_key");
  const strangerIdentityFile = sshKey(folder, "stranger_key");
  writeFileSync(join(folder, "authorized_keys"), readFileSync(`${identityFile}.pub`), { mode: 0o644 });
  const port = await freePort();
  const hostLine = (keyFile: string) =>
    `[127.0.0.1]:${port} ${readFileSync(`${keyFile}.pub`, "utf8").split(" ").slice(0, 2).join(" ")}\n`;
  writeFileSync(join(folder, "known_hosts"), hostLine(hostKey));
  writeFileSync(join(folder, "wrong_known_hosts"), hostLine(otherHostKey));
  writeFileSync(
    join(folder, "sshd_config"),
    [
      `ListenAddress 127.0.0.1:${port}`,
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${join(folder, "authorized_keys")}`,
      "PermitRootLogin no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      "PidFile none",
      "MaxSessions 64",
      "MaxStartups 64",
      "",
    ].join("\n"),
  );
  const { child } = await startListening(
    "/usr/sbin/sshd",
    ["-D", "-e", "-f", join(folder, "sshd_config")],
    port,
  );
  return {
    port,
    host: `ssh://${remoteUser}@127.0.0.1:${port}`,
    identityFile,
    strangerIdentityFile,
    knownHostsFile: join(folder, "known_hosts"),
    wrongKnownHostsFile: join(folder, "wrong_known_hosts"),
    stop: () => {
      child.kill("SIGKILL");
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
