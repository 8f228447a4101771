import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { SshTarget } from "./ssh-transport.ts";

/**
 * Where the Docker engine is, the way the docker CLI reads it: a host URL (unix://, tcp://, ssh://),
 * or a docker CLI context by name. Give it to the sandbox as `engine` to hold several engines in one
 * program; without it the environment decides (DOCKER_HOST, DOCKER_CONTEXT, the CLI's current context).
 */
export type EngineSettings = {
  /** `unix:///path/docker.sock`, `tcp://host:2376`, `ssh://user@host[:port]`. Wins over `context`. */
  host?: string;
  /** A docker CLI context (`docker context ls`), read from the CLI's config folder. */
  context?: string;
  /** TLS for tcp://: the folder holding ca.pem, cert.pem and key.pem (like DOCKER_CERT_PATH). */
  tlsCertPath?: string;
  /** Check the server's certificate against ca.pem (on unless set to false). Setting tlsCertPath turns TLS on. */
  tlsVerify?: boolean;
  /** For ssh://: a private key file (default: the ssh agent, then ~/.ssh/id_ed25519, id_ecdsa, id_rsa). */
  sshIdentityFile?: string;
  /** For ssh://: the known_hosts file the engine's host key must be in (default ~/.ssh/known_hosts). */
  sshKnownHostsFile?: string;
};

/** An engine endpoint, resolved: what to dial and why this one. */
export type ResolvedEngine =
  | { kind: "unix"; label: string; reason: string; socketPath: string }
  | {
      kind: "tcp";
      label: string;
      reason: string;
      host: string;
      port: number;
      tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer; verify: boolean };
    }
  | ({ kind: "ssh"; label: string; reason: string } & SshTarget);

/** A setting that cannot work, found before dialing: names the cause and the fix. */
export class EngineSettingsProblem extends Error {
  readonly label: string;

  constructor(label: string, message: string) {
    super(message);
    this.label = label;
    this.name = "EngineSettingsProblem";
  }
}

type Environment = NodeJS.ProcessEnv;

function dockerConfigFolder(environment: Environment): string {
  return environment.DOCKER_CONFIG || join(environment.HOME || homedir(), ".docker");
}

/** The docker CLI's current context: DOCKER_CONTEXT, else `currentContext` in config.json; "default" means none. */
export function currentContextName(environment: Environment): { name: string; reason: string } | undefined {
  if (environment.DOCKER_CONTEXT)
    return { name: environment.DOCKER_CONTEXT, reason: "DOCKER_CONTEXT is set" };
  const configFile = join(dockerConfigFolder(environment), "config.json");
  if (!existsSync(configFile)) return undefined;
  let current: unknown;
  try {
    current = (JSON.parse(readFileSync(configFile, "utf8")) as { currentContext?: unknown }).currentContext;
  } catch (error) {
    throw new EngineSettingsProblem(
      configFile,
      `${configFile} is not valid JSON (${(error as Error).message}): fix or remove it`,
    );
  }
  if (typeof current !== "string" || current === "" || current === "default") return undefined;
  return { name: current, reason: `the current context in ${configFile}` };
}

/** Reads a docker CLI context's docker endpoint (meta.json) and its TLS files. */
function readContext(
  name: string,
  reason: string,
  environment: Environment,
): EngineSettings & { reason: string } {
  const folder = dockerConfigFolder(environment);
  const digest = createHash("sha256").update(name).digest("hex");
  const metaFile = join(folder, "contexts", "meta", digest, "meta.json");
  const label = `context ${JSON.stringify(name)}`;
  if (!existsSync(metaFile)) {
    throw new EngineSettingsProblem(
      label,
      `no Docker context named ${JSON.stringify(name)} (${reason}; looked for ${metaFile}): create it with \`docker context create\`, or pick one from \`docker context ls\``,
    );
  }
  const meta = JSON.parse(readFileSync(metaFile, "utf8")) as {
    Endpoints?: { docker?: { Host?: string; SkipTLSVerify?: boolean } };
  };
  const endpoint = meta.Endpoints?.docker;
  if (!endpoint?.Host) {
    throw new EngineSettingsProblem(
      label,
      `the Docker context ${JSON.stringify(name)} has no docker endpoint (${metaFile})`,
    );
  }
  const tlsFolder = join(folder, "contexts", "tls", digest, "docker");
  return {
    host: endpoint.Host,
    ...(existsSync(tlsFolder) ? { tlsCertPath: tlsFolder, tlsVerify: endpoint.SkipTLSVerify !== true } : {}),
    reason: `${label} (${reason})`,
  };
}

/** What the environment asks for, as the docker CLI reads it (DOCKER_HOST beats DOCKER_CONTEXT). */
function settingsFromEnvironment(
  environment: Environment,
): (EngineSettings & { reason: string }) | undefined {
  const dockerHost = environment.DOCKER_HOST;
  if (dockerHost) {
    const tlsVerify = environment.DOCKER_TLS_VERIFY !== undefined && environment.DOCKER_TLS_VERIFY !== "";
    const tls = tlsVerify || (environment.DOCKER_TLS ?? "") !== "";
    return {
      host: dockerHost,
      ...(tls
        ? {
            tlsCertPath: environment.DOCKER_CERT_PATH || dockerConfigFolder(environment),
            tlsVerify,
          }
        : {}),
      reason: `DOCKER_HOST is set${tls ? ` (TLS${tlsVerify ? ", server verified" : ", server NOT verified"}, certificates from ${environment.DOCKER_CERT_PATH ? "DOCKER_CERT_PATH" : "~/.docker"})` : ""}`,
    };
  }
  const context = currentContextName(environment);
  return context ? readContext(context.name, context.reason, environment) : undefined;
}

function readPem(folder: string, file: string, label: string, what: string): Buffer {
  const path = join(folder, file);
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new EngineSettingsProblem(
      label,
      `TLS is on but the ${what} ${path} cannot be read (${code}): put ca.pem, cert.pem and key.pem in ${folder}, or point DOCKER_CERT_PATH (engine.tlsCertPath) at the folder that holds them`,
    );
  }
}

function resolveTcp(url: URL, settings: EngineSettings, label: string, reason: string): ResolvedEngine {
  const tlsWanted = settings.tlsCertPath !== undefined || settings.tlsVerify === true;
  const port = Number(url.port || (tlsWanted ? 2376 : 2375));
  if (!tlsWanted) return { kind: "tcp", label, reason, host: url.hostname, port };
  const folder = settings.tlsCertPath ?? join(homedir(), ".docker");
  const verify = settings.tlsVerify !== false;
  return {
    kind: "tcp",
    label,
    reason,
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port,
    tls: {
      ...(verify ? { ca: readPem(folder, "ca.pem", label, "CA certificate") } : {}),
      cert: readPem(folder, "cert.pem", label, "client certificate"),
      key: readPem(folder, "key.pem", label, "client key"),
      verify,
    },
  };
}

function resolveSsh(
  url: URL,
  settings: EngineSettings,
  label: string,
  reason: string,
  environment: Environment,
): ResolvedEngine {
  const home = environment.HOME || homedir();
  // Like ssh: the agent's keys first; a key file on disk only when no agent runs (it may need a passphrase).
  const identityFile =
    settings.sshIdentityFile ??
    (environment.SSH_AUTH_SOCK
      ? undefined
      : ["id_ed25519", "id_ecdsa", "id_rsa"]
          .map((name) => join(home, ".ssh", name))
          .find((path) => existsSync(path)));
  if (settings.sshIdentityFile && !existsSync(settings.sshIdentityFile)) {
    throw new EngineSettingsProblem(
      label,
      `the ssh identity file ${settings.sshIdentityFile} does not exist: fix engine.sshIdentityFile`,
    );
  }
  if (!identityFile && !environment.SSH_AUTH_SOCK) {
    throw new EngineSettingsProblem(
      label,
      `no ssh key to log in with: no ssh agent (SSH_AUTH_SOCK is unset) and no ~/.ssh/id_ed25519, id_ecdsa or id_rsa. Start an agent and \`ssh-add\` your key, or set engine.sshIdentityFile`,
    );
  }
  return {
    kind: "ssh",
    label,
    reason,
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: Number(url.port || 22),
    username: decodeURIComponent(url.username) || environment.USER || "root",
    ...(identityFile ? { identityFile } : {}),
    knownHostsFile: settings.sshKnownHostsFile ?? join(home, ".ssh", "known_hosts"),
    ...(environment.SSH_AUTH_SOCK ? { agentSocket: environment.SSH_AUTH_SOCK } : {}),
  };
}

/**
 * The engine the settings (else the environment) name, or undefined when neither names one (then the
 * usual local sockets are tried). Throws EngineSettingsProblem for a setting that cannot work.
 */
export function resolveEngine(
  settings: EngineSettings | undefined,
  environment: Environment = process.env,
): ResolvedEngine | undefined {
  let chosen: (EngineSettings & { reason: string }) | undefined;
  if (settings?.host) chosen = { ...settings, reason: "engine.host in the sandbox settings" };
  else if (settings?.context)
    chosen = {
      ...settings,
      ...readContext(settings.context, "engine.context in the sandbox settings", environment),
    };
  else chosen = settingsFromEnvironment(environment);
  if (!chosen?.host) return undefined;
  const host = chosen.host;
  const label = host;
  if (host.startsWith("unix://")) {
    return {
      kind: "unix",
      label,
      reason: chosen.reason,
      socketPath: host.slice("unix://".length) || "/var/run/docker.sock",
    };
  }
  let url: URL;
  try {
    url = new URL(host.includes("://") ? host : `tcp://${host}`);
  } catch {
    throw new EngineSettingsProblem(
      label,
      `${JSON.stringify(host)} is not an engine address: use unix:///path, tcp://host:port or ssh://user@host`,
    );
  }
  if (url.protocol === "tcp:" || url.protocol === "http:" || url.protocol === "https:") {
    return resolveTcp(url, chosen, label, chosen.reason);
  }
  if (url.protocol === "ssh:") return resolveSsh(url, chosen, label, chosen.reason, environment);
  throw new EngineSettingsProblem(
    label,
    `unsupported engine address scheme ${url.protocol} in ${JSON.stringify(host)}: use unix://, tcp:// or ssh://`,
  );
}
