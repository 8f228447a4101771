import { Agent as HttpsAgent } from "node:https";
import { homedir } from "node:os";
import Dockerode from "dockerode";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { DockerUnavailableError, type EndpointAttempt } from "../errors/docker-unavailable-error.ts";
import {
  type EngineSettings,
  EngineSettingsProblem,
  type ResolvedEngine,
  resolveEngine,
} from "./engine-settings.ts";
import { SshEngineAgent } from "./ssh-transport.ts";

/**
 * One place a Docker engine may answer: why it was chosen, and either the client options or a
 * problem found before dialing (a missing certificate, an unknown context).
 */
export type DockerEndpoint = {
  label: string;
  options: Dockerode.DockerOptions;
  reason?: string;
  problem?: string;
  /** A remote engine gets longer than a local socket to answer its first ping. */
  timeoutMs?: number;
};

/** Every option docker-modem reads, set: nothing of DOCKER_HOST/DOCKER_CERT_PATH leaks in from the environment. */
function modemOptions(options: Partial<Dockerode.DockerOptions>): Dockerode.DockerOptions {
  const base = {
    socketPath: undefined,
    host: undefined,
    port: undefined,
    protocol: "http" as const,
    ca: undefined,
    cert: undefined,
    key: undefined,
    agent: undefined,
    pathPrefix: "/",
    timeout: undefined,
  };
  return { ...base, ...options } as Dockerode.DockerOptions;
}

/** A client with dockerode's defaults (DOCKER_HOST or the local socket): the image builds' default engine. */
export function defaultDocker(): ContainerEngine {
  return new Dockerode();
}

/** The Dockerode options that dial a resolved engine (an ssh engine through its own agent). */
export function endpointFor(engine: ResolvedEngine): DockerEndpoint {
  const described = { label: engine.label, reason: engine.reason };
  if (engine.kind === "unix")
    return { ...described, options: modemOptions({ socketPath: engine.socketPath }) };
  const remote = { ...described, timeoutMs: remoteTimeoutMs };
  if (engine.kind === "ssh") {
    const agent = new SshEngineAgent(engine);
    return {
      ...remote,
      options: modemOptions({
        host: engine.host,
        port: engine.port,
        agent,
      } as Partial<Dockerode.DockerOptions>),
    };
  }
  if (!engine.tls) return { ...remote, options: modemOptions({ host: engine.host, port: engine.port }) };
  const { ca, cert, key, verify } = engine.tls;
  return {
    ...remote,
    options: modemOptions({
      host: engine.host,
      port: engine.port,
      protocol: "https",
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      ...(verify ? {} : { agent: new HttpsAgent({ rejectUnauthorized: false }) }),
    } as Partial<Dockerode.DockerOptions>),
  };
}

const remoteTimeoutMs = 15_000;

/**
 * The endpoints tried. The engine named by `settings` (the sandbox's `engine` option), else by the
 * environment as the docker CLI reads it (DOCKER_HOST, DOCKER_CONTEXT, the CLI's current context),
 * alone: like the docker CLI, a named engine is never swapped for another. Else the usual sockets
 * (system, Docker Desktop, rootless).
 */
export function defaultEndpoints(
  environment: NodeJS.ProcessEnv = process.env,
  settings?: EngineSettings,
): DockerEndpoint[] {
  let engine: ResolvedEngine | undefined;
  try {
    engine = resolveEngine(settings, environment);
  } catch (error) {
    if (!(error instanceof EngineSettingsProblem)) throw error;
    return [{ label: error.label, options: {}, problem: error.message }];
  }
  if (engine) return [endpointFor(engine)];
  const home = environment.HOME || homedir();
  const sockets = [
    "/var/run/docker.sock",
    `${home}/.docker/run/docker.sock`,
    `${home}/.docker/desktop/docker.sock`,
    ...(environment.XDG_RUNTIME_DIR ? [`${environment.XDG_RUNTIME_DIR}/docker.sock`] : []),
    ...(typeof process.getuid === "function" ? [`/run/user/${process.getuid()}/docker.sock`] : []),
  ];
  return [...new Set(sockets)].map((socketPath) => ({
    label: socketPath,
    reason: "no DOCKER_HOST, DOCKER_CONTEXT or current docker CLI context: the usual local sockets",
    options: modemOptions({ socketPath }),
  }));
}

const serverCertificateCodes = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

function describeTlsFailure(code: string, message: string): string | undefined {
  if (serverCertificateCodes.has(code)) {
    return `${code}: the engine's certificate is not trusted (${message}); check ca.pem in the certificate folder and that the certificate names this host`;
  }
  if (
    /^ERR_SSL_(TLSV13_ALERT_CERTIFICATE_REQUIRED|SSLV3_ALERT_BAD_CERTIFICATE|TLSV1_ALERT_UNKNOWN_CA|SSLV3_ALERT_CERTIFICATE_UNKNOWN|TLSV1_ALERT_ACCESS_DENIED)$/.test(
      code,
    )
  ) {
    return `${code}: certificate rejected: the engine refused this client's certificate; use cert.pem and key.pem signed by the CA the engine trusts`;
  }
  return undefined;
}

function describeFailure(error: unknown, endpoint: DockerEndpoint): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const local = endpoint.options.socketPath !== undefined;
  const tls = code ? describeTlsFailure(code, message) : undefined;
  if (tls) return tls;
  switch (code) {
    case "ENOENT":
      return local ? "ENOENT: no socket there" : `ENOENT: ${message}`;
    case "EACCES":
      return "EACCES: permission denied (add the user to the docker group, or fix the socket's mode)";
    case "ECONNREFUSED":
      return local
        ? "ECONNREFUSED: the socket exists but no engine is listening"
        : "ECONNREFUSED: connection refused, nothing listens on that host and port";
    case "ECONNRESET":
      return `ECONNRESET: the connection was cut (${endpoint.options.protocol === "https" ? "a TLS engine refusing the client certificate does this" : "is it a Docker engine?"})`;
    case "ETIMEDOUT":
      return `ETIMEDOUT: ${message.startsWith("no ") ? message : "no answer in time"}`;
    default:
      return code ? `${code}: ${message}` : message;
  }
}

/** How often the ping's clock ticks, and the most one tick may count. */
const pingTickMs = 100;
const pingTickMostMs = 200;

/**
 * The engine's ping, failed after `milliseconds` of this process's own running time. A tick counts at
 * most 200 ms: while the event loop is held (a large import runs meanwhile, the CPU is starved), the
 * answer cannot be read, and a plain timer would fire first when the loop comes back, blaming every
 * endpoint, a missing socket included, for the process's own wait.
 */
function pingWithin(docker: Dockerode, milliseconds: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    let counted = 0;
    let last = performance.now();
    timer = setInterval(() => {
      const now = performance.now();
      counted += Math.min(now - last, pingTickMostMs);
      last = now;
      if (counted < milliseconds) return;
      reject(Object.assign(new Error(`no answer within ${milliseconds} ms`), { code: "ETIMEDOUT" }));
    }, pingTickMs);
  });
  return Promise.race([docker.ping().then(() => undefined), timeout]).finally(() => clearInterval(timer));
}

/**
 * Connects to the first endpoint (in order) whose engine answers a ping. All endpoints are tried at
 * once, so an unreachable Docker fails within `timeoutMs` (default 1500 ms). Throws
 * DockerUnavailableError listing every endpoint and why it failed.
 */
export async function connectDocker(
  options: { endpoints?: DockerEndpoint[]; timeoutMs?: number; engine?: EngineSettings } = {},
): Promise<{ docker: Dockerode; endpoint: string; reason: string }> {
  const endpoints = options.endpoints ?? defaultEndpoints(process.env, options.engine);
  const results = await Promise.all(endpoints.map((endpoint) => tryEndpoint(endpoint, options.timeoutMs)));
  const attempts: EndpointAttempt[] = [];
  for (const result of results) {
    if (result.docker) {
      return {
        docker: result.docker,
        endpoint: result.endpoint.label,
        reason: result.endpoint.reason ?? "given",
      };
    }
    attempts.push({
      endpoint: result.endpoint.label,
      reason: result.endpoint.problem ?? describeFailure(result.error, result.endpoint),
    });
  }
  throw new DockerUnavailableError({ attempts, cause: results.find((result) => result.error)?.error });
}

async function tryEndpoint(
  endpoint: DockerEndpoint,
  timeoutMs: number | undefined,
): Promise<{ endpoint: DockerEndpoint; docker?: Dockerode; error?: unknown }> {
  if (endpoint.problem) return { endpoint, error: new Error(endpoint.problem) };
  let docker: Dockerode;
  try {
    docker = new Dockerode({ ...endpoint.options });
  } catch (error) {
    return { endpoint, error };
  }
  try {
    await pingWithin(docker, timeoutMs ?? endpoint.timeoutMs ?? 1500);
    return { endpoint, docker };
  } catch (error) {
    (endpoint.options as { agent?: { destroy?: () => void } }).agent?.destroy?.();
    return { endpoint, error };
  }
}
