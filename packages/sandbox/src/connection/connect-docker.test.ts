import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DockerUnavailableError } from "../errors/docker-unavailable-error.ts";
import { connectDocker, defaultEndpoints } from "./connect-docker.ts";

const folder = mkdtempSync(join(tmpdir(), "codeaction-docker-"));
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("connectDocker", () => {
  it("lists each endpoint tried and why it failed, within 2 s even when one never answers", async () => {
    // A loopback port nobody listens on (ECONNREFUSED).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closedPort = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const refused = `tcp://127.0.0.1:${closedPort}`;
    // A socket that accepts and never answers (a hung engine).
    const silent = join(folder, "silent.sock");
    const silentServer = createServer(() => undefined);
    servers.push(silentServer);
    await new Promise<void>((resolve) => silentServer.listen(silent, resolve));

    let caught: unknown;
    try {
      await connectDocker({
        endpoints: [
          { label: join(folder, "missing.sock"), options: { socketPath: join(folder, "missing.sock") } },
          { label: refused, options: { host: "127.0.0.1", port: closedPort, protocol: "http" } },
          { label: silent, options: { socketPath: silent } },
        ],
      });
    } catch (error) {
      caught = error;
    }
    expect(DockerUnavailableError.isInstance(caught)).toBe(true);
    const error = caught as DockerUnavailableError;
    expect(error.code).toBe("docker-unavailable");
    expect(error.attempts.map((attempt) => attempt.reason.split(":")[0])).toEqual([
      "ENOENT",
      "ECONNREFUSED",
      "ETIMEDOUT",
    ]);
    expect(error.message).toContain(`${join(folder, "missing.sock")} (ENOENT`);
  });

  it("does not blame the engine for its own held event loop (a large import right after the ping went out)", async () => {
    // An engine that answers the ping at once, when this process gets to read.
    const answering = join(folder, "answering.sock");
    const server = createServer((socket) => {
      socket.once("data", () =>
        socket.end("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nOK"),
      );
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(answering, resolve));
    const connecting = connectDocker({
      endpoints: [
        { label: join(folder, "absent.sock"), options: { socketPath: join(folder, "absent.sock") } },
        { label: answering, options: { socketPath: answering } },
      ],
      timeoutMs: 300,
    });
    // The loop is held three times as long as the timeout: no I/O can be read meanwhile.
    const heldUntil = performance.now() + 900;
    while (performance.now() < heldUntil) {
      // busy: as Node's module loader is during a large import
    }
    const connected = await connecting;
    expect(connected.endpoint).toBe(answering);
  });

  it("tries only DOCKER_HOST when it is set, like the docker CLI", () => {
    const endpoints = defaultEndpoints({ DOCKER_HOST: "unix:///custom/docker.sock" });
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]).toMatchObject({
      label: "unix:///custom/docker.sock",
      reason: "DOCKER_HOST is set",
      options: { socketPath: "/custom/docker.sock", host: undefined },
    });
  });

  it("tries the usual sockets when DOCKER_HOST is unset", () => {
    const labels = defaultEndpoints({}).map((endpoint) => endpoint.label);
    expect(labels).toContain("/var/run/docker.sock");
    expect(labels.some((label) => label.endsWith("/.docker/run/docker.sock"))).toBe(true);
  });
});
