import type { IncomingMessage } from "node:http";
import type { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js";
import type { CliContext } from "../context.ts";
import { createToken, removeTokenFile, writeTokenFile } from "../listener/http-token.ts";
import { isLoopbackHost } from "../listener/request-checks.ts";
import { listenHttp } from "./http-listener.ts";

/**
 * Serves Streamable HTTP until `stopped` resolves. Every request needs the bearer token: the one
 * in `--token-file`, or a new random one, printed once on stderr and written to a 0600 file
 * (removed again when the server stops). A bind beyond loopback is warned about.
 */
export async function serveHttp(options: {
  host: string;
  port: number;
  /** From `--token-file`; undefined: a new random token. */
  token: string | undefined;
  functionCount: number;
  context: CliContext;
  createServer: (request: IncomingMessage) => McpServer;
  stopped: Promise<void>;
}): Promise<void> {
  const { context } = options;
  const token = options.token ?? createToken();
  const listener = await listenHttp({
    host: options.host,
    port: options.port,
    token,
    createServer: options.createServer,
    onError: (error) =>
      context.stderr.write(`codeaction mcp: a request failed: ${(error as Error).message}\n`),
  });
  let tokenPath: string | undefined;
  try {
    if (!isLoopbackHost(options.host)) {
      context.stderr.write(
        `codeaction mcp: warning: listening on ${options.host}, beyond this machine's loopback: anyone who can reach it and holds the token can run programs with your tools. Prefer the default 127.0.0.1 (or an SSH tunnel).\n`,
      );
    }
    if (options.token === undefined) {
      tokenPath = await writeTokenFile(token, Number(new URL(listener.url).port));
      context.stderr.write(
        `codeaction mcp: clients must send "Authorization: Bearer ${token}" (the token is also in ${tokenPath}, readable by you only; --token-file FILE gives your own)\n`,
      );
    }
    context.stderr.write(
      `codeaction mcp: serving ${options.functionCount} functions at ${listener.url} (list_functions, run_program, start_program, program_result)\n`,
    );
    await options.stopped;
  } finally {
    await listener.close();
    if (tokenPath) await removeTokenFile(tokenPath).catch(() => undefined);
  }
}
