import { homedir } from "node:os";
import Dockerode from "dockerode";
import { DockerUnavailableError, type EndpointAttempt } from "./errors/docker-unavailable-error.ts";

/** One place a Docker engine may answer. */
export type DockerEndpoint = { label: string; options: Dockerode.DockerOptions };

/** The endpoints tried: DOCKER_HOST alone when it is set, else the usual sockets (system, Docker Desktop, rootless). */
export function defaultEndpoints(environment: NodeJS.ProcessEnv = process.env): DockerEndpoint[] {
  const endpoints: DockerEndpoint[] = [];
  const dockerHost = environment.DOCKER_HOST;
  if (dockerHost) {
    if (dockerHost.startsWith("unix://")) {
      endpoints.push({ label: `DOCKER_HOST=${dockerHost}`, options: { socketPath: dockerHost.slice(7) } });
    } else {
      // tcp://, ssh://, TLS through DOCKER_TLS_VERIFY and DOCKER_CERT_PATH: docker-modem reads the environment.
      endpoints.push({ label: `DOCKER_HOST=${dockerHost}`, options: {} as Dockerode.DockerOptions });
    }
    // Like the docker CLI: DOCKER_HOST names the engine meant; never fall back to another one.
    return endpoints;
  }
  const home = homedir();
  const sockets = [
    "/var/run/docker.sock",
    `${home}/.docker/run/docker.sock`,
    `${home}/.docker/desktop/docker.sock`,
    ...(environment.XDG_RUNTIME_DIR ? [`${environment.XDG_RUNTIME_DIR}/docker.sock`] : []),
    ...(typeof process.getuid === "function" ? [`/run/user/${process.getuid()}/docker.sock`] : []),
  ];
  for (const socketPath of new Set(sockets)) {
    if (endpoints.some((endpoint) => endpoint.options.socketPath === socketPath)) continue;
    endpoints.push({ label: socketPath, options: { socketPath } });
  }
  return endpoints;
}

function describeFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "ENOENT":
      return "ENOENT: no socket there";
    case "EACCES":
      return "EACCES: permission denied (add the user to the docker group, or fix the socket's mode)";
    case "ECONNREFUSED":
      return "ECONNREFUSED: the socket exists but no engine is listening";
    case "ETIMEDOUT":
      return "ETIMEDOUT: no answer in time";
    default:
      return code ? `${code}: ${message}` : message;
  }
}

function pingWithin(docker: Dockerode, milliseconds: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`no answer within ${milliseconds} ms`), { code: "ETIMEDOUT" })),
      milliseconds,
    );
  });
  return Promise.race([docker.ping().then(() => undefined), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Connects to the first endpoint (in order) whose engine answers a ping. All endpoints are tried at
 * once, so an unreachable Docker fails within `timeoutMs` (default 1500 ms). Throws
 * DockerUnavailableError listing every endpoint and why it failed.
 */
export async function connectDocker(
  options: { endpoints?: DockerEndpoint[]; timeoutMs?: number } = {},
): Promise<{ docker: Dockerode; endpoint: string }> {
  const endpoints = options.endpoints ?? defaultEndpoints();
  const timeoutMs = options.timeoutMs ?? 1500;
  const results = await Promise.all(
    endpoints.map(async (endpoint) => {
      let docker: Dockerode;
      try {
        docker = new Dockerode({ ...endpoint.options });
      } catch (error) {
        return { endpoint, error };
      }
      try {
        await pingWithin(docker, timeoutMs);
        return { endpoint, docker };
      } catch (error) {
        return { endpoint, error };
      }
    }),
  );
  const attempts: EndpointAttempt[] = [];
  for (const result of results) {
    if ("docker" in result && result.docker)
      return { docker: result.docker, endpoint: result.endpoint.label };
    attempts.push({ endpoint: result.endpoint.label, reason: describeFailure(result.error) });
  }
  throw new DockerUnavailableError({ attempts, cause: results.find((result) => "error" in result)?.error });
}
