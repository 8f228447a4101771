import type { Logger } from "pino";
import { ToolInputError } from "../errors/tool-input-error.ts";
import { askApproval, denialOf } from "../tools/approval.ts";
import { invalidArguments, roundedMilliseconds, type ToolSpec } from "../tools/tool-spec.ts";
import { encodeToolValue } from "../tools/tool-value.ts";
import { jsonBytesAtLeast } from "../tools/tool-value-size.ts";
import { describeUnknownKeys, findUnknownKeys } from "../tools/unknown-keys.ts";
import type { AgentEvent, ApprovalHook, ToolCallRecord } from "../types.ts";
import { type KeptValue, keepMessage, keepValue, keptCharacters, keptFields } from "./bounded-value.ts";
import { EncodedToolResult } from "./encoded-tool-result.ts";
import { headerFrameParts, hostFrame } from "./frames.ts";
import { parsedSizeEstimate, parseToolRequest } from "./tool-request.ts";

/**
 * Calls past the cap still get an answer, but only this many of them are recorded; a program that
 * rings this many times past the cap (in any way: new ids, repeated ids, ids with no request file)
 * is flooding the bridge, and its run ends as a tool-limit failure.
 */
export const extraRecords = 100;
/** Characters of arguments, results and previews the records of one run may keep; past it, only sizes. */
const maxKeptCharacters = 4 * 1024 * 1024;

type ErrorType = "ToolError" | "ToolDenied" | "ToolCallLimitExceeded";
/** An answer; an ok one's value travels as its JSON (`Encoded.json`). */
type Response = { ok: true } | { ok: false; error: { type: ErrorType; message: string } };

/** A tool call as the bridge received it; `args` is what its record keeps of the arguments. */
type CallStart = {
  id: string;
  tool: string;
  startedAt: number;
  requestBytes: number;
  args?: KeptValue | undefined;
  /** Bytes of the run's in-flight budget this call holds until it is settled. */
  reserved?: number;
};

/** A result ready to send: its JSON (the program's) and its size; what the record keeps of it. */
type Encoded = { json: string; bytes: number; kept: KeptValue | undefined };

export type ToolCallsOptions = {
  tools: ToolSpec[];
  runId: string;
  maxToolCalls: number;
  maxRequestBytes: number;
  /** Largest answer (its JSON) the program gets. */
  maxResponseBytes: number;
  approval?: ApprovalHook | undefined;
  logger?: Logger | undefined;
  onEvent?: ((event: AgentEvent) => void) | undefined;
  /** The program's clock: it stands still while an approval hook decides. */
  clock: { pause(): void; resume(): void };
  /** What the calls in flight may hold at once: parsed arguments and unread answers (bridgeDefaults). */
  maxBytesInFlight: number;
  /** Bytes of answers written and not yet taken by the relay. */
  queuedBytes: () => number;
  /** Sends an answer frame (its pieces, in order) to the relay. */
  send: (parts: Array<Buffer | string>) => void;
  /** True once the run ended: nothing more is answered. */
  ended: () => boolean;
};

/**
 * The tool calls of one run: each request checked, counted, approved, run and answered, and
 * recorded within bounds (previews and sizes, a budget of kept characters, a cap on records).
 */
export class ToolCalls {
  readonly #options: ToolCallsOptions;
  readonly #tools: Map<string, ToolSpec>;
  readonly #records: ToolCallRecord[] = [];
  /** Calls being answered: a `cancelled` record is made for each one the program's end cuts off. */
  readonly #inFlight = new Map<string, { controller: AbortController; call: CallStart }>();
  readonly #seen = new Set<string>();
  #calls = 0;
  #keptCharacters = 0;
  /** Bytes the calls in flight hold, reckoned from their requests (parsedSizeEstimate). */
  #bytesInFlight = 0;
  #unrecorded = 0;
  #limitHit = false;

  constructor(options: ToolCallsOptions) {
    this.#options = options;
    this.#tools = new Map(options.tools.map((tool) => [tool.name, tool]));
  }

  get records(): ToolCallRecord[] {
    return this.#records;
  }

  /** True when a call went past maxToolCalls. */
  get limitHit(): boolean {
    return this.#limitHit;
  }

  /** Calls past the cap that got an answer but no record. */
  get unrecorded(): number {
    return this.#unrecorded;
  }

  /** One request (frame Q): `refused` is the relay's reason when it did not read the request file. */
  async handle(id: string, body: Buffer, refused: string | undefined): Promise<void> {
    if (this.#options.ended()) return;
    if (this.#inFlight.has(id)) {
      this.#options.logger?.debug({ id }, "ignored a repeated request that is still running");
      return;
    }
    if (this.#seen.has(id)) {
      this.#reply(id, failure("ToolError", `request ${id} was already answered; every call needs a new id`));
      return;
    }
    const call: CallStart = { id, tool: "", startedAt: performance.now(), requestBytes: body.length };
    this.#calls += 1;
    if (this.#calls > this.#options.maxToolCalls) {
      // Past the cap a request is not parsed (a flood of large ones would cost the host a copy
      // each): its record names the tool as the stub writes it, near the start.
      call.tool = toolNameNearStart(body);
      this.#limitHit = true;
      const message = `the run may make at most ${this.#options.maxToolCalls} tool calls (maxToolCalls); this call was not made`;
      return this.#refuse(call, "limit", failure("ToolCallLimitExceeded", message));
    }
    const overBudget = refused ? undefined : this.#reserve(call, body);
    if (overBudget !== undefined) {
      // Not parsed: what parsing would build is the cost being refused.
      call.tool = toolNameNearStart(body);
      this.#seen.add(id);
      return this.#refuse(call, "limit", failure("ToolError", overBudget));
    }
    const parsed: ReturnType<typeof parseToolRequest> = refused
      ? { ok: false, reason: refused }
      : parseToolRequest(id, body, { maxBytes: this.#options.maxRequestBytes });
    call.tool = parsed.ok ? parsed.request.tool : (parsed.tool ?? "");
    this.#seen.add(id);
    if (!parsed.ok)
      return this.#refuse(call, "invalid", failure("ToolError", `invalid tool call: ${parsed.reason}`));
    const spec = this.#tools.get(parsed.request.tool);
    if (!spec) {
      const known = [...this.#tools.keys()].map((name) => JSON.stringify(name)).join(", ") || "none";
      const message = `unknown tool ${JSON.stringify(call.tool)}; the tools are: ${known}`;
      return this.#refuse(call, "unknown-tool", failure("ToolError", message));
    }
    return this.#start(call, spec, parsed.request.args);
  }

  /**
   * Reserves what the request would take once parsed from the run's in-flight budget, or says why
   * it cannot: alone over the budget, or over it with the calls already in flight. Reckoned from the
   * bytes (each value counted), so a small text that parses into many objects is refused unparsed.
   */
  #reserve(call: CallStart, body: Buffer): string | undefined {
    if (body.length > this.#options.maxRequestBytes) return undefined;
    const budget = this.#options.maxBytesInFlight;
    const { values, bytes } = parsedSizeEstimate(body);
    const mebibytes = (count: number) => `${(count / 1024 ** 2).toFixed(1)} MiB`;
    if (bytes > budget) {
      return `the arguments hold ${values} JSON values, about ${mebibytes(bytes)} on the host once parsed, over its budget of ${mebibytes(budget)} for a run's calls in flight; send fewer values per call`;
    }
    if (this.#bytesInFlight + bytes > budget) {
      return `the host already holds about ${mebibytes(this.#bytesInFlight)} for this run's calls in flight, and this call's arguments (about ${mebibytes(bytes)} once parsed) would put it over its budget of ${mebibytes(budget)}; wait for answers before sending more, or send less per call`;
    }
    this.#bytesInFlight += bytes;
    call.reserved = bytes;
    return undefined;
  }

  /** The program ended: calls still running are told to stop and recorded `cancelled` (no answer). */
  cancelAll(): void {
    for (const { controller, call } of this.#inFlight.values()) {
      controller.abort(new Error("the program ended"));
      this.#settle(call, "cancelled", failure("ToolError", "the program ended before the call finished"));
    }
  }

  async #start(call: CallStart, spec: ToolSpec, args: Record<string, unknown>): Promise<void> {
    call.args = this.#keep(keepValue(args));
    this.#emitCall(call);
    const unknownKeys = findUnknownKeys(spec.inputSchema, args);
    if (unknownKeys.length > 0) {
      const refusal = new ToolInputError({ tool: spec.name, issues: describeUnknownKeys(unknownKeys) });
      return this.#settle(call, "invalid", failure("ToolError", refusal.message));
    }
    const controller = new AbortController();
    this.#inFlight.set(call.id, { controller, call });
    try {
      await this.#invoke(call, spec, args, controller.signal);
    } finally {
      this.#inFlight.delete(call.id);
    }
  }

  async #invoke(call: CallStart, spec: ToolSpec, args: Record<string, unknown>, signal: AbortSignal) {
    // Checked before anyone is asked: an approval is never sought for a call that could not run.
    const invalid = this.#options.approval ? await invalidArguments(spec, args) : undefined;
    if (this.#options.ended()) return;
    if (invalid !== undefined) return this.#settle(call, "invalid", failure("ToolError", invalid));
    const denial = await this.#approve(spec.name, args, signal);
    if (this.#options.ended()) return;
    if (denial !== undefined) return this.#settle(call, "denied", failure("ToolDenied", denial));
    let encoded: Encoded | { refusal: string; bytes: number };
    try {
      const value = await spec.invoke(args, { runId: this.#options.runId, signal, callId: call.id });
      if (this.#options.ended()) return;
      encoded = this.#encode(value, spec.name);
    } catch (error) {
      if (this.#options.ended()) return;
      // Arguments the tool's schema refused are "invalid", like the bridge's own checks.
      const status = ToolInputError.isInstance(error) ? "invalid" : "error";
      return this.#settle(call, status, failure("ToolError", errorMessage(error)));
    }
    if ("refusal" in encoded)
      return this.#settle(call, "error", failure("ToolError", encoded.refusal), { bytes: encoded.bytes });
    this.#settle(call, "ok", { ok: true }, encoded);
  }

  /**
   * The value's JSON for the program, or why it is refused. A value whose size alone (a lower
   * bound, measured without encoding it) is over the limit is refused before it is encoded, so the
   * host never holds a second, encoded copy of it. Encoded once: the text for the program, and a
   * JSON-safe copy of which the record keeps a preview (tool-value.ts).
   */
  #encode(value: unknown, tool: string): Encoded | { refusal: string; bytes: number } {
    const limit = this.#options.maxResponseBytes;
    const over = (size: string) => resultTooLarge(tool, size, limit);
    if (value instanceof EncodedToolResult) {
      const bytes = Buffer.byteLength(value.text);
      if (bytes > limit) return { refusal: over(String(bytes)), bytes };
      return { json: value.text, bytes, kept: this.#keep(keepValue(value.record, bytes)) };
    }
    const atLeast = jsonBytesAtLeast(value, limit);
    if (atLeast > limit) return { refusal: over(`at least ${atLeast}`), bytes: atLeast };
    const unread = this.#options.queuedBytes();
    const budget = this.#options.maxBytesInFlight;
    const busy = (size: number) =>
      `the result of ${tool} is ${size} bytes and the program has not yet read ${unread} bytes of earlier answers: together over the host's budget of ${budget} bytes for a run's answers in flight; read answers before asking for more, or ask for less`;
    if (unread + atLeast > budget) return { refusal: busy(atLeast), bytes: atLeast };
    const { text, record } = encodeToolValue(value, tool);
    const bytes = Buffer.byteLength(text);
    if (bytes > limit) return { refusal: over(String(bytes)), bytes };
    if (unread + bytes > budget) return { refusal: busy(bytes), bytes };
    return { json: text, bytes, kept: this.#keep(keepValue(record, bytes)) };
  }

  /** Undefined when approved, else the reason to give the program. The clock stands still meanwhile. */
  async #approve(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const approval = this.#options.approval;
    if (!approval) return undefined;
    this.#options.clock.pause();
    try {
      return denialOf(tool, await askApproval(approval, { tool, args, runId: this.#options.runId, signal }));
    } finally {
      this.#options.clock.resume();
    }
  }

  /** A call the bridge refused before any tool ran: only its size and the reason are kept. */
  #refuse(call: CallStart, status: ToolCallRecord["status"], response: Response): void {
    this.#emitCall(call);
    this.#settle(call, status, response);
  }

  #emitCall(call: CallStart): void {
    this.#options.onEvent?.({
      type: "tool-call",
      runId: this.#options.runId,
      id: call.id,
      tool: call.tool,
      ...keptFields(call.args, "args"),
    });
  }

  /** Keeps `kept` whole while the run's record budget lasts; past it, nothing but sizes is kept. */
  #keep(kept: KeptValue): KeptValue | undefined {
    const characters = keptCharacters(kept);
    if (this.#keptCharacters + characters > maxKeptCharacters) return undefined;
    this.#keptCharacters += characters;
    return kept;
  }

  /** Records the call, reports it, and answers the program (`result` for an ok call). */
  #settle(
    call: CallStart,
    status: ToolCallRecord["status"],
    response: Response,
    result: Partial<Encoded> = {},
  ): void {
    const { id, tool } = call;
    this.#bytesInFlight -= call.reserved ?? 0;
    call.reserved = 0;
    const durationMs = roundedMilliseconds(performance.now() - call.startedAt);
    const record: ToolCallRecord = { id, tool, status, durationMs, requestBytes: call.requestBytes };
    Object.assign(record, keptFields(call.args, "args"));
    if (response.ok) Object.assign(record, keptFields(result.kept, "result"));
    else record.error = keepMessage(response.error.message);
    if (result.bytes !== undefined && record.result === undefined) record.resultBytes = result.bytes;
    if (this.#records.length < this.#options.maxToolCalls + extraRecords) this.#records.push(record);
    else this.#unrecorded += 1;
    this.#options.logger?.debug({ id, tool, status, durationMs }, "tool call");
    const { args: _args, argsPreview: _preview, requestBytes: _bytes, ...outcome } = record;
    this.#options.onEvent?.({ type: "tool-result", runId: this.#options.runId, ...outcome });
    this.#reply(id, response, result.json);
  }

  /** Sends the answer: an ok one as its value's JSON, written as it is (no copy is built here). */
  #reply(id: string, response: Response, valueJson?: string): void {
    if (this.#options.ended()) return;
    const limit = this.#options.maxResponseBytes;
    let body = response.ok && valueJson !== undefined ? undefined : JSON.stringify(response);
    if (body !== undefined && Buffer.byteLength(body) > limit) {
      const message = `the answer is ${Buffer.byteLength(body)} bytes, over the bridge's limit of ${limit}`;
      body = JSON.stringify(failure("ToolError", message));
    }
    const parts = body === undefined ? ['{"ok":true,"value":', valueJson ?? "null", "}"] : [body];
    this.#options.send(headerFrameParts(hostFrame.answer, { id }, parts));
  }
}

/** The ToolError a program gets for a result over the bridge's limit (`size`: its bytes, or "at least N"). */
export function resultTooLarge(tool: string, size: string, limit: number): string {
  return `the result of ${tool} is ${size} bytes, over the bridge's limit of ${limit} bytes (codeAction.maxResultBytes); ask for less (filter, page or aggregate in the tool)`;
}

/** The tool a request names in its first kilobyte (where the stub writes it), or "". */
function toolNameNearStart(body: Buffer): string {
  const start = body.subarray(0, 1024).toString("utf8");
  const match = /"tool"\s*:\s*"([^"\\]{1,200})"/.exec(start);
  return match?.[1] ?? "";
}

function failure(type: ErrorType, message: string): Response {
  return { ok: false, error: { type, message } };
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
