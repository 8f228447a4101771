import type { Logger } from "pino";

/** How much of a tool result a trace line shows. */
export const traceResultLength = 200;

export type ToolTracer = {
  call(tool: string, args: unknown): void;
  result(tool: string, content: string): void;
};

/**
 * `traceTools: true`: one line per call and one per result, like the reference:
 * "-> Invoking tool: load_orders with {}" and "<- Tool result from load_orders: [...]".
 * Lines go to the logger (info) when there is one, else to stderr.
 */
export function createToolTracer(options: { logger?: Logger }): ToolTracer {
  const write = (line: string) => {
    if (options.logger) options.logger.info(line);
    else process.stderr.write(`${line}\n`);
  };
  return {
    call(tool, args) {
      write(`-> Invoking tool: ${tool} with ${shorten(safeJson(args))}`);
    },
    result(tool, content) {
      write(`<- Tool result from ${tool}: ${shorten(content)}`);
    },
  };
}

export function shorten(text: string, length = traceResultLength): string {
  const oneLine = text.replace(/\s*\n\s*/g, " ");
  return oneLine.length > length ? `${oneLine.slice(0, length)}…` : oneLine;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
