import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { binPath, repositoryRoot } from "./run-cli.ts";

/** A running `codeaction mcp --http` process: its URL, its token (when it made one), its stderr. */
export type McpHttpProcess = {
  url: string;
  /** The generated token and its file (undefined with --token-file). */
  token: string | undefined;
  tokenPath: string | undefined;
  child: ChildProcess;
  stderr(): string;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
};

/**
 * Starts `node codeaction.js mcp ...args` (args should hold `--http 0`) and resolves once it says
 * where it serves; rejects with its stderr if it exits first. `options.bin` is another `codeaction`
 * bin to run (an installed package's), `options.cwd` its folder (default: the repository's sources).
 */
export function startMcpHttp(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { bin?: string; cwd?: string } = {},
): Promise<McpHttpProcess> {
  const child = spawn(process.execPath, [options.bin ?? binPath, "mcp", ...args], {
    cwd: options.cwd ?? repositoryRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const served = /serving \d+ functions at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (!served) return;
      const tokenLine = /"Authorization: Bearer (\S+)" \(the token is also in (\S+), /.exec(stderr);
      resolve({
        url: served[1]!,
        token: tokenLine?.[1],
        tokenPath: tokenLine?.[2],
        child,
        stderr: () => stderr,
        stop: () => {
          child.kill("SIGTERM");
          return exited;
        },
      });
    });
    void exited.then((code) =>
      reject(new Error(`codeaction mcp exited (${code}) before serving: ${stderr}`)),
    );
  });
}

/** The official SDK client connected to `url`, sending `headers` with every request. */
export async function connectClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "codeaction-security-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}
