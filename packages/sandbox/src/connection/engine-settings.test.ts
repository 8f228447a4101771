import { createHash, createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EngineSettingsProblem, resolveEngine } from "./engine-settings.ts";
import { checkHostKey } from "./known-hosts.ts";

const folder = mkdtempSync(join(tmpdir(), "codeaction-engine-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function problemOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof EngineSettingsProblem) return error.message;
    throw error;
  }
  throw new Error("no problem reported");
}

describe("resolveEngine", () => {
  it("reads nothing when nothing names an engine (the usual sockets are tried)", () => {
    expect(resolveEngine(undefined, { HOME: folder })).toBeUndefined();
  });

  it("turns TLS on with DOCKER_TLS_VERIFY and names a missing client certificate and the fix", () => {
    const certs = join(folder, "certs-ca-only");
    mkdirSync(certs);
    writeFileSync(join(certs, "ca.pem"), "ca");
    const message = problemOf(() =>
      resolveEngine(undefined, {
        DOCKER_HOST: "tcp://engine.invalid:2376",
        DOCKER_TLS_VERIFY: "1",
        DOCKER_CERT_PATH: certs,
      }),
    );
    expect(message).toContain(`client certificate ${join(certs, "cert.pem")} cannot be read (ENOENT)`);
    expect(message).toContain("DOCKER_CERT_PATH");
  });

  it("settings win over the environment, and DOCKER_HOST over DOCKER_CONTEXT", () => {
    const fromSettings = resolveEngine(
      { host: "unix:///settings.sock" },
      { DOCKER_HOST: "unix:///environment.sock" },
    );
    expect(fromSettings).toMatchObject({
      kind: "unix",
      socketPath: "/settings.sock",
      reason: "engine.host in the sandbox settings",
    });
    const fromHost = resolveEngine(undefined, { DOCKER_HOST: "tcp://192.0.2.1", DOCKER_CONTEXT: "ignored" });
    expect(fromHost).toMatchObject({ kind: "tcp", host: "192.0.2.1", port: 2375 });
  });

  it("reads a context's endpoint and TLS folder from the docker CLI's store", () => {
    const config = join(folder, "docker-config");
    const digest = createHash("sha256").update("far").digest("hex");
    mkdirSync(join(config, "contexts", "meta", digest), { recursive: true });
    writeFileSync(
      join(config, "contexts", "meta", digest, "meta.json"),
      JSON.stringify({ Name: "far", Endpoints: { docker: { Host: "ssh://deploy@192.0.2.1:2222" } } }),
    );
    writeFileSync(join(config, "config.json"), JSON.stringify({ currentContext: "far" }));
    const engine = resolveEngine(undefined, {
      DOCKER_CONFIG: config,
      HOME: folder,
      SSH_AUTH_SOCK: "/agent.sock",
    });
    expect(engine).toMatchObject({
      kind: "ssh",
      host: "192.0.2.1",
      port: 2222,
      username: "deploy",
      agentSocket: "/agent.sock",
    });
    expect(engine?.reason).toBe(`context "far" (the current context in ${join(config, "config.json")})`);
    expect(problemOf(() => resolveEngine({ context: "gone" }, { DOCKER_CONFIG: config }))).toContain(
      'no Docker context named "gone"',
    );
  });

  it("refuses an ssh engine with no key to log in with, saying how to give one", () => {
    const message = problemOf(() => resolveEngine({ host: "ssh://deploy@192.0.2.1" }, { HOME: folder }));
    expect(message).toContain("SSH_AUTH_SOCK is unset");
  });
});

describe("checkHostKey", () => {
  const key = Buffer.from("a host key blob");
  const other = Buffer.from("another key");
  it("trusts a listed key (plain or hashed name), calls a different one changed and an absent host unknown", () => {
    const salt = Buffer.from("0123456789abcdefghij");
    const hashed = createHmac("sha1", salt).update("[127.0.0.1]:2222").digest("base64");
    const file = join(folder, "known_hosts");
    writeFileSync(
      file,
      [
        `# comment`,
        `|1|${salt.toString("base64")}|${hashed} ssh-ed25519 ${key.toString("base64")}`,
        `example.invalid,192.0.2.1 ssh-ed25519 ${key.toString("base64")}`,
        "",
      ].join("\n"),
    );
    expect(checkHostKey({ knownHostsFile: file, host: "127.0.0.1", port: 2222, key })).toBe("trusted");
    expect(checkHostKey({ knownHostsFile: file, host: "192.0.2.1", port: 22, key })).toBe("trusted");
    expect(checkHostKey({ knownHostsFile: file, host: "192.0.2.1", port: 22, key: other })).toBe("changed");
    expect(checkHostKey({ knownHostsFile: file, host: "127.0.0.1", port: 22, key })).toBe("unknown");
    expect(checkHostKey({ knownHostsFile: join(folder, "none"), host: "127.0.0.1", port: 22, key })).toBe(
      "unknown",
    );
  });
});
