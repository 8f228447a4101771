import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.docker-unavailable-error";
const symbol = Symbol.for(marker);

/** One Docker endpoint `connectDocker` tried, and why it did not answer. */
export type EndpointAttempt = { endpoint: string; reason: string };

/** No Docker engine answered on any endpoint. Lists each endpoint tried and why it failed. */
export class DockerUnavailableError extends SandboxError {
  protected readonly [symbol] = true;
  readonly attempts: EndpointAttempt[];

  constructor(options: { attempts: EndpointAttempt[]; cause?: unknown }) {
    const tried = options.attempts.map((attempt) => `${attempt.endpoint} (${attempt.reason})`).join(", ");
    super(
      `No Docker engine answered, and the sandbox has no fallback. Tried: ${tried || "no endpoint"}. Start Docker (or fix the socket permissions), or point DOCKER_HOST at a running engine.`,
      { code: "docker-unavailable", cause: options.cause },
    );
    this.name = "DockerUnavailableError";
    this.attempts = options.attempts;
  }

  static override isInstance(error: unknown): error is DockerUnavailableError {
    return SandboxError.hasMarker(error, marker);
  }
}
