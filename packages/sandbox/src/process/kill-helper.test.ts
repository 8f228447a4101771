import { Duplex } from "node:stream";
import type Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { KillHelper } from "./kill-helper.ts";

/** One frame of Docker's multiplexed exec stream (Tty false) on stdout. */
function stdoutFrame(payload: Buffer | string): Buffer {
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, "latin1");
  const header = Buffer.alloc(8);
  header.writeUInt8(1, 0);
  header.writeUInt32BE(bytes.length, 4);
  return Buffer.concat([header, bytes]);
}

/**
 * The helper's exec connection as the host sees it: what the host writes (requests) is recorded, and
 * the helper's output comes from `output`, pulled only as fast as the host reads it. `pulledBytes`
 * counts what the host took.
 */
class HelperConnection extends Duplex {
  readonly requests: string[] = [];
  pulledBytes = 0;
  private readonly queued: Buffer[] = [];
  private readonly source: Iterator<Buffer> | undefined;

  constructor(output?: Iterable<Buffer>) {
    super();
    this.source = output?.[Symbol.iterator]();
  }

  /** Output the helper sends now (one frame). */
  say(payload: string): void {
    this.queued.push(stdoutFrame(payload));
    this.flush();
  }

  override _read(): void {
    this.flush();
  }

  private flush(): void {
    for (;;) {
      const next = this.queued.shift() ?? this.source?.next();
      const chunk = Buffer.isBuffer(next) ? next : next?.done === false ? next.value : undefined;
      if (!chunk) return;
      this.pulledBytes += chunk.length;
      if (!this.push(chunk)) return;
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.requests.push(String(chunk).trim());
    callback();
  }
}

/** A container whose exec hands back `connection` (the only part of dockerode KillHelper uses). */
function containerWith(connection: HelperConnection): Dockerode.Container {
  return {
    exec: async () => ({ start: async () => connection }),
  } as unknown as Dockerode.Container;
}

/** Waits until the host has written `count` requests (a request is sent after the ones before it). */
async function requestsSent(connection: HelperConnection, count: number): Promise<void> {
  while (connection.requests.length < count) await new Promise((resolve) => setImmediate(resolve));
}

async function startedHelper(connection: HelperConnection): Promise<KillHelper> {
  const helper = await KillHelper.start(containerWith(connection));
  connection.say("ready 42\n");
  await helper.ready;
  return helper;
}

describe("the kill helper's output, read as hostile", () => {
  it("answers a request from a line split over several frames", async () => {
    const connection = new HelperConnection();
    const helper = await startedHelper(connection);
    const answer = helper.killMarked("abc");
    await requestsSent(connection, 1);
    expect(connection.requests).toEqual(["kill abc"]);
    connection.say("kil");
    connection.say("led 3 surv");
    connection.say("ivors 0\n");
    await expect(answer).resolves.toEqual({ killed: 3, survivors: 0 });
    expect(helper.alive).toBe(true);
  });

  it("takes a line of 4097 bytes as a failed helper, and a 4096-byte one as a line", async () => {
    const long = new HelperConnection();
    const failed = await startedHelper(long);
    const refused = failed.killMarked("abc");
    await requestsSent(long, 1);
    long.say(`${"x".repeat(4097)}\n`);
    await expect(refused).rejects.toThrow(
      "the kill helper sent a line over 4096 bytes; it is treated as failed",
    );
    expect(failed.alive).toBe(false);

    const exact = new HelperConnection();
    const helper = await startedHelper(exact);
    const unparsable = helper.killMarked("abc");
    await requestsSent(exact, 1);
    exact.say(`${"x".repeat(4096)}\n`);
    await expect(unparsable).rejects.toThrow(/unexpected kill helper answer/);
    expect(helper.alive).toBe(false);
  });

  it("stops reading a flood without a newline: 64 MiB offered, the host takes under 1 MiB and holds no line", async () => {
    const frame = stdoutFrame(Buffer.alloc(64 * 1024, "y"));
    const flood = new HelperConnection(
      (function* () {
        for (let index = 0; index < 1024; index += 1) yield frame;
      })(),
    );
    const helper = await KillHelper.start(containerWith(flood));
    await expect(helper.ready).rejects.toThrow("the kill helper sent a line over 4096 bytes");
    expect(helper.alive).toBe(false);
    expect(flood.destroyed).toBe(true);
    expect(flood.pulledBytes).toBeLessThan(1024 * 1024);
    await expect(helper.killMarked("abc")).rejects.toThrow("over 4096 bytes");
    expect(flood.requests).toEqual([]);
  });

  it("takes an answer nobody asked for (a forged one) as a failed helper, and never hands it to a later request", async () => {
    const connection = new HelperConnection();
    const helper = await startedHelper(connection);
    connection.say("killed 0 survivors 0\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(helper.alive).toBe(false);
    await expect(helper.killMarked("abc")).rejects.toThrow(
      "the kill helper sent an answer nobody asked for; it is treated as failed",
    );
    await expect(helper.oomKillCount()).rejects.toThrow("an answer nobody asked for");
    expect(connection.destroyed).toBe(true);
  });

  it("takes a malformed answer to a kill or an oom request as a failed helper", async () => {
    const connection = new HelperConnection();
    const helper = await startedHelper(connection);
    const oom = helper.oomKillCount();
    await requestsSent(connection, 1);
    connection.say("oom lots\n");
    await expect(oom).resolves.toBeUndefined();
    expect(helper.alive).toBe(false);
  });
});
