import { readFileSync } from "node:fs";
import { Agent, type ClientRequestArgs } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { Client, type ClientChannel } from "ssh2";
import { checkHostKey, knownHostsName } from "./known-hosts.ts";

/** Where and how to log in: the ssh:// part of a resolved engine. */
export type SshTarget = {
  host: string;
  port: number;
  username: string;
  identityFile?: string;
  knownHostsFile: string;
  agentSocket?: string;
  /** Handshake and login must finish within this many milliseconds. Default 10000. */
  readyTimeoutMs?: number;
};

/** The most stderr kept from a failed `docker system dial-stdio`: enough for its message. */
const maximumStderrBytes = 2048;

/** A failure of the ssh link, with its cause already in words (host key, login, the remote docker CLI). */
export class SshEngineError extends Error {
  readonly code: "ssh-host-key-unknown" | "ssh-host-key-changed" | "ssh-login-refused" | "ssh-dial-failed";

  constructor(message: string, code: SshEngineError["code"]) {
    super(message);
    this.code = code;
    this.name = "SshEngineError";
  }
}

/**
 * An http.Agent that reaches a Docker engine over one ssh connection, as the docker CLI does: every
 * HTTP connection is a channel running `docker system dial-stdio` on the engine's host. The host key
 * must be in known_hosts. The connection keeps this process alive only while a request is open: a
 * stream that is unref'ed (the sandbox's lifeline) does not hold it.
 */
export class SshEngineAgent extends Agent {
  private readonly target: SshTarget;
  private client: Promise<Client> | undefined;
  private socket: Socket | undefined;
  private readonly holding = new Set<ClientChannel>();
  private opening = 0;
  private hostKeyProblem: SshEngineError | undefined;

  constructor(target: SshTarget) {
    // Keep-alive reuses channels: each new one starts a shell and the docker CLI on the engine's host.
    super({ keepAlive: true, maxFreeSockets: 8 });
    this.target = target;
  }

  override createConnection(
    _options: ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const done = callback ?? (() => undefined);
    this.connected().then(
      (client) => this.openChannel(client, done),
      (error: Error) => done(error, undefined as unknown as Duplex),
    );
    return undefined;
  }

  /** Ends the ssh connection (open streams close with it). */
  override destroy(): void {
    super.destroy();
    const client = this.client;
    this.client = undefined;
    void client?.then(
      (connected) => connected.end(),
      () => undefined,
    );
  }

  private openChannel(client: Client, done: (error: Error | null, stream: Duplex) => void): void {
    this.opening += 1;
    this.updateReference();
    client.exec("docker system dial-stdio", (error, channel) => {
      this.opening -= 1;
      this.updateReference();
      if (error) {
        done(error, undefined as unknown as Duplex);
        return;
      }
      let stderr = "";
      channel.stderr.on("data", (chunk: Buffer) => {
        if (stderr.length < maximumStderrBytes) stderr += chunk.toString("utf8").slice(0, maximumStderrBytes);
      });
      channel.on("exit", (code: number | null) => {
        if (code !== 0 && code !== null) {
          const reason = stderr.trim() || `exit code ${code}`;
          channel.emit(
            "error",
            new SshEngineError(
              `\`docker system dial-stdio\` failed on ${this.target.host} (${reason}): the engine's host needs the docker CLI on the login user's PATH and access to its engine`,
              "ssh-dial-failed",
            ),
          );
          channel.destroy();
        }
      });
      this.hold(channel);
      // What http.Agent calls on a socket: ref/unref decide whether this channel holds the process.
      Object.assign(channel, {
        unref: () => this.release(channel),
        ref: () => this.hold(channel),
        setKeepAlive: () => channel,
        setNoDelay: () => channel,
        setTimeout: () => channel,
      });
      channel.once("close", () => this.release(channel));
      done(null, channel);
    });
  }

  private hold(channel: ClientChannel): void {
    this.holding.add(channel);
    this.updateReference();
  }

  private release(channel: ClientChannel): void {
    this.holding.delete(channel);
    this.updateReference();
  }

  /** The connection keeps the process alive while a channel is being opened or a held one is open. */
  private updateReference(): void {
    if (this.holding.size + this.opening > 0) this.socket?.ref();
    else this.socket?.unref();
  }

  private connected(): Promise<Client> {
    this.client ??= this.login().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private login(): Promise<Client> {
    const target = this.target;
    return new Promise<Client>((resolve, reject) => {
      // No Nagle delay: each bridged call is a small frame each way, which Nagle's algorithm with
      // the peer's delayed acknowledgement would hold back for tens of milliseconds.
      const socket = connect({ host: target.host, port: target.port, noDelay: true });
      const client = new Client();
      const fail = (error: Error) => {
        socket.destroy();
        reject(this.explain(error));
      };
      socket.once("error", fail);
      client.once("error", fail);
      client.once("ready", () => {
        socket.off("error", fail);
        client.off("error", fail);
        client.on("error", () => undefined);
        client.once("close", () => {
          if (this.socket === socket) this.client = undefined;
        });
        this.socket = socket;
        this.updateReference();
        resolve(client);
      });
      client.connect({
        sock: socket,
        username: target.username,
        readyTimeout: target.readyTimeoutMs ?? 10_000,
        hostVerifier: (key: Buffer) => this.verifyHostKey(key),
        ...(target.identityFile ? { privateKey: readFileSync(target.identityFile) } : {}),
        ...(target.agentSocket ? { agent: target.agentSocket } : {}),
      });
    });
  }

  private verifyHostKey(key: Buffer): boolean {
    const { host, port, knownHostsFile } = this.target;
    const verdict = checkHostKey({ knownHostsFile, host, port, key });
    const name = knownHostsName(host, port);
    const scan = `ssh-keyscan${port === 22 ? "" : ` -p ${port}`} ${host}`;
    if (verdict === "unknown") {
      this.hostKeyProblem = new SshEngineError(
        `host key unknown: ${name} is not in ${knownHostsFile}. Check its fingerprint (\`${scan} | ssh-keygen -lf -\`) and add it (\`${scan} >> ${knownHostsFile}\`), or log in once with ssh`,
        "ssh-host-key-unknown",
      );
    } else if (verdict === "changed") {
      this.hostKeyProblem = new SshEngineError(
        `host key changed: ${name} sent a key that differs from the one in ${knownHostsFile} (a reinstalled host, or someone in between). If the host was reinstalled, remove the old key with \`ssh-keygen -R '${name}' -f ${knownHostsFile}\``,
        "ssh-host-key-changed",
      );
    }
    return verdict === "trusted";
  }

  private explain(error: Error): Error {
    if (this.hostKeyProblem) return this.hostKeyProblem;
    const level = (error as { level?: string }).level;
    if (level === "client-authentication") {
      const { username, host, identityFile, agentSocket } = this.target;
      const keys = [identityFile, agentSocket ? "the ssh agent's keys" : undefined]
        .filter(Boolean)
        .join(" and ");
      return new SshEngineError(
        `login refused: ${username}@${host} accepted none of ${keys || "no key"}. Add the public key to ~${username}/.ssh/authorized_keys on the engine's host`,
        "ssh-login-refused",
      );
    }
    if (error.message.startsWith("Timed out while waiting for handshake")) {
      return Object.assign(new Error(`no ssh handshake within ${this.target.readyTimeoutMs ?? 10_000} ms`), {
        code: "ETIMEDOUT",
      });
    }
    return error;
  }
}
