import type { Logger } from "pino";
import { type BridgeOptions, type BridgeOutcome, bridgeDefaults, type RelayExit } from "./bridge-options.ts";
import {
  encodeFrame,
  type Frame,
  FrameDecoder,
  hostFrame,
  parseJsonObject,
  relayFrame,
  splitHeaderFrame,
} from "./frames.ts";
import { ProgramClock } from "./program-clock.ts";
import { ProgramOutput, StreamHead } from "./program-output.ts";
import { parseExit } from "./relay-exit.ts";
import { errorMessage, extraRecords, ToolCalls } from "./tool-calls.ts";
import { requestIdPattern } from "./tool-request.ts";

export type { BridgeOptions, BridgeOutcome, RelayExit, RelayProcess } from "./bridge-options.ts";
export { bridgeDefaults } from "./bridge-options.ts";

/** Bytes of answers waiting to reach the relay past which the host stops reading new requests. */
const pendingAnswerBytes = 1024 * 1024;
const relayStderrLimit = 64 * 1024;
const tailLimit = 64 * 1024;

/**
 * Runs one program through the relay over its exec's stdio and answers its tool calls. Never
 * throws: every way a run can end is in the outcome. The relay and the program share a uid, so
 * every frame is treated as hostile: sizes are capped before buffering, ids and requests are
 * validated, and anything malformed ends the run as an infrastructure failure.
 */
export function runBridge(options: BridgeOptions): Promise<BridgeOutcome> {
  return new BridgeRun(options).run();
}

/**
 * One run's state machine over the relay's frames: start, program running, killed, ended. The
 * program's output (program-output.ts) and its tool calls (tool-calls.ts) are handled apart.
 */
class BridgeRun {
  readonly #options: BridgeOptions;
  readonly #logger: Logger | undefined;
  readonly #decoder: FrameDecoder;
  readonly #clock: ProgramClock;
  readonly #output: ProgramOutput;
  readonly #calls: ToolCalls;
  readonly #relayStderr = new StreamHead(relayStderrLimit);
  /** Every request the relay forwarded, answered or not. */
  #requests = 0;
  #floodEnded = false;
  #paused = false;
  /** The signal that ended the relay, when one did before it reported the program's exit. */
  #relaySignal: number | undefined;
  #timedOut = false;
  #aborted = false;
  #killSent = false;
  #failure: string | undefined;
  #exit: RelayExit | undefined;
  #finished = false;
  #startedAt = 0;
  #endedAt: number | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  #startupTimer: NodeJS.Timeout | undefined;
  #resolve: ((outcome: BridgeOutcome) => void) | undefined;
  #onAbort = () => {
    this.#aborted = true;
    this.#killAndWait();
  };
  // The listeners on the relay's streams: removed when a step ends (the next step adds its own).
  #onData = (chunk: Buffer | string) => this.#receive(chunk);
  #onEnd = () => void this.#onStreamEnd();
  #onError = (error: Error) => this.#fail(`the relay's output stream failed: ${error.message}`);
  #onStderr = (chunk: Buffer | string) => this.#relayStderr.add(chunk);
  #onStdinError = (error: Error) => this.#logger?.debug({ error: error.message }, "relay stdin error");

  constructor(options: BridgeOptions) {
    this.#options = options;
    this.#logger = options.logger?.child({ component: "bridge", runId: options.runId });
    const output = options.maxOutputBytes ?? bridgeDefaults.maxOutputBytes;
    const request = options.maxRequestBytes ?? bridgeDefaults.maxRequestBytes;
    this.#output = new ProgramOutput(output);
    this.#decoder = frameDecoder(output, request);
    this.#clock = new ProgramClock({
      limitMs: options.execTimeout * 1000,
      onExpire: () => {
        this.#timedOut = true;
        this.#logger?.debug({ execTimeout: options.execTimeout }, "program timed out");
        this.#killAndWait();
      },
    });
    this.#calls = new ToolCalls({
      tools: options.tools,
      runId: options.runId,
      maxToolCalls: options.maxToolCalls,
      maxRequestBytes: request,
      maxResponseBytes: options.maxResponseBytes ?? bridgeDefaults.maxResponseBytes,
      approval: options.approval,
      logger: this.#logger,
      onEvent: options.onEvent,
      clock: this.#clock,
      maxBytesInFlight: Math.max(bridgeDefaults.maxBytesInFlight, 2 * request),
      queuedBytes: () => (options.process.stdin as { writableLength?: number }).writableLength ?? 0,
      send: (parts) => this.#write(parts),
      ended: () => this.#finished,
    });
  }

  run(): Promise<BridgeOutcome> {
    const { process, signal } = this.#options;
    return new Promise<BridgeOutcome>((resolve) => {
      this.#resolve = resolve;
      this.#startedAt = performance.now();
      process.stdout.on("data", this.#onData);
      process.stdout.on("end", this.#onEnd);
      process.stdout.on("close", this.#onEnd);
      process.stdout.on("error", this.#onError);
      process.stderr.on("data", this.#onStderr);
      process.stderr.on("error", ignoreError);
      process.stdin.on("error", this.#onStdinError);
      // A kept interpreter's relay waits paused between two steps.
      process.stdout.resume();
      if (signal?.aborted) {
        this.#aborted = true;
        this.#finish();
        return;
      }
      signal?.addEventListener("abort", this.#onAbort, { once: true });
      this.#write([encodeFrame(hostFrame.start, JSON.stringify(this.#startMessage()))]);
      // The program's clock starts when the relay reports the program running (frame R), so exec
      // and interpreter start-up do not eat into execTimeout; start-up has its own bound.
      const startup = this.#options.startupTimeoutMs ?? bridgeDefaults.startupTimeoutMs;
      this.#startupTimer = setTimeout(
        () => this.#fail(`the relay did not start the program within ${startup} ms`),
        startup,
      );
    });
  }

  /** What the relay needs to start the program (frame S). */
  #startMessage() {
    const options = this.#options;
    return {
      program: options.program,
      module: options.toolsModule,
      bridgeDirectory: options.bridgeDirectory ?? bridgeDefaults.bridgeDirectory,
      workDirectory: options.workDirectory ?? bridgeDefaults.workDirectory,
      maxOutputBytes: options.maxOutputBytes ?? bridgeDefaults.maxOutputBytes,
      maxRequestBytes: options.maxRequestBytes ?? bridgeDefaults.maxRequestBytes,
      killStragglers: options.killStragglers ?? true,
      ...(options.keep ? { keep: true } : {}),
    };
  }

  // Frames from the relay ----------------------------------------------------------------

  #receive(chunk: Buffer | string): void {
    if (this.#finished) return;
    try {
      for (const frame of this.#decoder.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) {
        this.#onFrame(frame);
        if (this.#finished) return;
      }
    } catch (error) {
      this.#fail(`the relay broke the bridge protocol: ${(error as Error).message}`);
    }
  }

  #onFrame(frame: Frame): void {
    switch (frame.type) {
      case relayFrame.ready:
        this.#logger?.debug(parseJsonObject(frame.payload), "program started");
        clearTimeout(this.#startupTimer);
        this.#clock.start();
        return;
      case relayFrame.stdout:
        this.#output.capture("stdout", frame.payload);
        this.#options.onOutput?.("stdout", frame.payload);
        return;
      case relayFrame.stderr:
        this.#output.capture("stderr", frame.payload);
        this.#options.onOutput?.("stderr", frame.payload);
        return;
      case relayFrame.tail:
        this.#output.captureTail(frame.payload);
        return;
      case relayFrame.request:
        this.#onRequest(frame.payload);
        return;
      case relayFrame.notice:
        this.#logger?.debug(
          { notice: String(parseJsonObject(frame.payload).message).slice(0, 300) },
          "relay notice",
        );
        return;
      case relayFrame.exit:
        this.#exit = parseExit(parseJsonObject(frame.payload));
        this.#endedAt = performance.now();
        this.#finish();
        return;
      case relayFrame.fatal:
        this.#fail(`the relay failed: ${String(parseJsonObject(frame.payload).message).slice(0, 500)}`);
        return;
    }
  }

  /** A request frame (Q): counted (a flood ends the run), then handed to the tool calls. */
  #onRequest(payload: Buffer): void {
    const { header, body } = splitHeaderFrame(payload);
    const id = header.id;
    if (typeof id !== "string" || !requestIdPattern.test(id)) throw new Error("a request has an invalid id");
    const refused = typeof header.refused === "string" ? header.refused.slice(0, 300) : undefined;
    this.#requests += 1;
    if (this.#requests > this.#options.maxToolCalls + extraRecords) {
      this.#endFlood();
      return;
    }
    this.#calls
      .handle(id, body, refused)
      .catch((error: unknown) => this.#fail(`answering a tool call failed: ${errorMessage(error)}`));
  }

  // Writing and ending ---------------------------------------------------------------------

  /** Writes a frame's pieces in order to the relay's stdin. */
  #write(parts: Array<Buffer | string>): void {
    const { stdin, stdout } = this.#options.process;
    try {
      for (const part of parts) stdin.write(part);
      // Back-pressure: while answers wait to reach the relay, read no new requests (the relay keeps
      // reading its stdin while it waits to write, so this cannot deadlock).
      if (!this.#paused && writableLength(stdin) > pendingAnswerBytes) {
        this.#paused = true;
        stdout.pause();
        stdin.once("drain", () => {
          this.#paused = false;
          if (!this.#finished) stdout.resume();
        });
      }
    } catch (error) {
      this.#fail(`could not write to the relay: ${errorMessage(error)}`);
    }
  }

  /** Too many requests past maxToolCalls: the program is flooding the bridge; end its run. */
  #endFlood(): void {
    if (this.#floodEnded) return;
    this.#floodEnded = true;
    this.#logger?.debug({ requests: this.#requests }, "the program flooded the bridge; ending the run");
    this.#killAndWait();
  }

  #sendKill(): void {
    if (this.#killSent) return;
    this.#killSent = true;
    this.#write([encodeFrame(hostFrame.kill)]);
  }

  #killAndWait(): void {
    if (this.#finished) return;
    this.#sendKill();
    const grace = this.#options.killGraceMs ?? bridgeDefaults.killGraceMs;
    this.#graceTimer ??= setTimeout(() => {
      this.#logger?.debug({ grace }, "the relay did not report an exit after the kill");
      this.#options.process.kill?.().catch(() => undefined);
      this.#finish();
    }, grace);
  }

  #fail(message: string): void {
    if (this.#finished) return;
    this.#failure ??= message;
    this.#logger?.debug({ failure: message }, "bridge failure");
    this.#sendKill();
    this.#finish();
  }

  async #onStreamEnd(): Promise<void> {
    if (this.#finished) return;
    if (this.#timedOut || this.#aborted) return this.#finish();
    const exit = await Promise.race([
      this.#options.process.exit.then(
        (value) => value.exitCode,
        () => null,
      ),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 1000).unref()),
    ]);
    if (exit !== null && exit > 128 && exit <= 128 + 64) {
      // Killed by a signal: nothing outside the container does that, but the program (same uid) can.
      this.#relaySignal = exit - 128;
      return this.#finish();
    }
    const stderr = this.#relayStderr.text().trim().slice(-1000);
    this.#fail(
      `the relay's output ended before it reported the program's exit (relay exit code ${exit ?? "unknown"})` +
        (stderr ? `: ${stderr}` : ""),
    );
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#endedAt ??= performance.now();
    this.#clock.stop();
    clearTimeout(this.#graceTimer);
    clearTimeout(this.#startupTimer);
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
    this.#calls.cancelAll();
    if (this.#exit?.living) this.#leaveForNextStep();
    else this.#endRelay();
    if (this.#calls.unrecorded > 0)
      this.#logger?.debug({ unrecorded: this.#calls.unrecorded }, "calls past the cap not recorded");
    if (this.#relayStderr.bytes > 0)
      this.#logger?.debug({ relayStderr: this.#relayStderr.text() }, "relay stderr");
    this.#resolve?.(this.#outcome());
  }

  /** The relay's input is ended (it then stops everything) and its output read to the end. */
  #endRelay(): void {
    const { stdin, stdout } = this.#options.process;
    try {
      stdin.end();
    } catch {
      // the relay is already gone
    }
    stdout.resume();
  }

  /**
   * A step ended and its interpreter lives: this run's listeners come off the relay's streams,
   * which wait paused for the next step's run. The relay sends nothing between two steps; bytes
   * after its step's exit report break the protocol.
   */
  #leaveForNextStep(): void {
    const { stdin, stdout, stderr } = this.#options.process;
    stdout.off("data", this.#onData);
    stdout.off("end", this.#onEnd);
    stdout.off("close", this.#onEnd);
    stdout.off("error", this.#onError);
    stderr.off("data", this.#onStderr);
    stderr.off("error", ignoreError);
    stdin.off("error", this.#onStdinError);
    stdout.pause();
    if (this.#decoder.pendingBytes > 0) {
      this.#failure = "the relay sent more after a step's end";
      this.#endRelay();
    }
  }

  #outcome(): BridgeOutcome {
    const programOut = this.#output.assemble("stdout");
    const programErr = this.#output.assemble("stderr");
    if (this.#relaySignal !== undefined) {
      programErr.text += `\n[codeaction: the bridge relay was killed by signal ${this.#relaySignal} before the program ended; the program must not signal the relay or other processes it did not start]\n`;
    }
    return {
      ...(this.#exit ? { exit: this.#exit } : {}),
      stdout: programOut.text,
      stderr: programErr.text,
      ...(programOut.base64 === undefined ? {} : { stdoutBase64: programOut.base64 }),
      ...(programErr.base64 === undefined ? {} : { stderrBase64: programErr.base64 }),
      truncated: this.#output.truncated,
      ...(this.#output.resultLost ? { resultLost: true } : {}),
      toolCalls: this.#calls.records,
      limitHit: this.#calls.limitHit || this.#floodEnded,
      ...(this.#floodEnded ? { flooded: true } : {}),
      ...(this.#relaySignal === undefined ? {} : { relaySignal: this.#relaySignal }),
      timedOut: this.#timedOut,
      aborted: this.#aborted,
      ...(this.#failure ? { failure: this.#failure } : {}),
      runMs: (this.#endedAt ?? performance.now()) - this.#startedAt,
    };
  }
}

/** The frame decoder with each relay frame type's largest payload. */
function frameDecoder(outputLimit: number, requestLimit: number): FrameDecoder {
  const small = 64 * 1024;
  return new FrameDecoder({
    [relayFrame.ready]: small,
    [relayFrame.stdout]: Math.max(small, outputLimit),
    [relayFrame.stderr]: Math.max(small, outputLimit),
    [relayFrame.tail]: tailLimit + 1025,
    [relayFrame.request]: requestLimit + 1025,
    [relayFrame.notice]: small,
    [relayFrame.exit]: small,
    [relayFrame.fatal]: small,
  });
}

function ignoreError(): void {}

/** Bytes written to a stream and not yet flushed (0 for a stream that does not say). */
function writableLength(stream: NodeJS.WritableStream): number {
  return (stream as { writableLength?: number }).writableLength ?? 0;
}
