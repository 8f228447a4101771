import type { SandboxManager, SpawnedProcess, WarmProcess } from "@codeaction/sandbox";
import type { Logger } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CodeActionError } from "../errors/code-action-error.ts";

// The two roads of the warm relay: the manager's warmCommand (createCodeActionSandbox) and the
// relay a turn starts (spawnRelay). The session hands its warm process out explicitly; this proves
// they meet for the same preimport (the relay known by its command's identity, not its argv), and
// that a mismatch is an error with `warmMismatch: "error"` (a test's option) and a logged reason
// otherwise.
const managerOptions = vi.hoisted(() => ({ seen: [] as Array<{ warmCommand?: string[] }> }));
vi.mock("./new-sandbox-manager.ts", () => ({
  newSandboxManager: (_config: unknown, options: { warmCommand?: string[] }) => {
    managerOptions.seen.push(options);
    return {} as SandboxManager;
  },
}));

// Imported after the mock, from a fresh module registry: `pnpm test:unit` runs files without
// isolation, so an earlier file may have loaded code-action-sandbox.ts with the real manager. The
// relay's functions come from the same registry: a relay is known by the module that made it.
let createCodeActionSandbox: typeof import("./code-action-sandbox.ts").createCodeActionSandbox;
let relayCommand: typeof import("./relay-process.ts").relayCommand;
let spawnRelay: typeof import("./relay-process.ts").spawnRelay;
let warmRelayMismatch: typeof import("./relay-process.ts").warmRelayMismatch;
beforeAll(async () => {
  vi.resetModules();
  ({ createCodeActionSandbox } = await import("./code-action-sandbox.ts"));
  ({ relayCommand, spawnRelay, warmRelayMismatch } = await import("./relay-process.ts"));
});
// And the mock goes with this file: the files after it load the real manager again.
afterAll(() => {
  vi.doUnmock("./new-sandbox-manager.ts");
  vi.resetModules();
});

/** The warm command createCodeActionSandbox gives its manager for this preimport. */
function managersWarmCommand(preimport: string[]): string[] {
  createCodeActionSandbox({}, { preimport });
  const warmCommand = managerOptions.seen.at(-1)?.warmCommand;
  if (!warmCommand) throw new Error("createCodeActionSandbox gave its manager no warmCommand");
  return warmCommand;
}

/** A session whose container holds a warm process started with `argv`. */
function sessionWithWarm(argv: string[]) {
  const warmProcess = { warm: true } as unknown as SpawnedProcess;
  const freshProcess = { fresh: true } as unknown as SpawnedProcess;
  const handle: Pick<WarmProcess, "argv" | "claim" | "close"> = {
    argv,
    claim: vi.fn(() => warmProcess),
    close: vi.fn(),
  };
  const session = {
    takeWarm: vi.fn(() => handle),
    spawn: vi.fn((_argv: string[]) => freshProcess),
  };
  return { session, handle, warmProcess, freshProcess };
}

describe("the warm relay a session hands out", () => {
  it("is the relay a turn with the same preimport uses: claimed, no exec of its own", () => {
    for (const preimport of [[], ["pandas"], ["numpy", "matplotlib.pyplot"]]) {
      const { session, handle, warmProcess } = sessionWithWarm(managersWarmCommand(preimport));
      expect(spawnRelay(session, preimport)).toBe(warmProcess);
      expect(handle.claim).toHaveBeenCalledOnce();
      expect(session.spawn).not.toHaveBeenCalled();
    }
  });

  it("with another preimport, is an error in the tests, naming both lists and the fix", () => {
    const { session, handle } = sessionWithWarm(managersWarmCommand(["pandas"]));
    let error: unknown;
    try {
      spawnRelay(session, [], { warmMismatch: "error" });
    } catch (caught) {
      error = caught;
    }
    expect(CodeActionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "warm-mismatch" });
    expect((error as Error).message).toContain(
      "the warm relay preimports [pandas] and the turn asks for []: give createCodeActionSandbox the same preimport as codeAction.preimport",
    );
    expect(handle.claim).not.toHaveBeenCalled();
    expect(handle.close).toHaveBeenCalledOnce();
  });

  it("with another preimport, in production: closed, a fresh relay, the reason on the debug log", () => {
    const { session, handle, freshProcess } = sessionWithWarm(managersWarmCommand([]));
    const debug = vi.fn();
    const logger = { debug } as unknown as Logger;
    expect(spawnRelay(session, ["pandas"], { logger })).toBe(freshProcess);
    expect(handle.close).toHaveBeenCalledOnce();
    expect(session.spawn).toHaveBeenCalledWith(relayCommand(["pandas"]));
    expect(debug).toHaveBeenCalledWith(
      { reason: expect.stringContaining("the warm relay preimports [] and the turn asks for [pandas]") },
      "warm relay not used",
    );
  });

  it("that is not the bridge relay at all is named as such", () => {
    expect(warmRelayMismatch(["python3", "-c", "other"], relayCommand())).toMatch(
      /not this package's bridge relay/,
    );
    expect(warmRelayMismatch(relayCommand(["json"]), relayCommand(["json"]))).toBeUndefined();
  });

  it("is known by the command line this package made, not by its words: a copy of it is not the relay", () => {
    const made = relayCommand(["json"]);
    expect(warmRelayMismatch([...made], relayCommand(["json"]))).toMatch(/not this package's bridge relay/);
    expect(warmRelayMismatch(made, relayCommand(["json"]))).toBeUndefined();
  });

  it("without a warm process (an ordinary session): a fresh relay", () => {
    const fresh = { fresh: true } as unknown as SpawnedProcess;
    const session = { takeWarm: () => undefined, spawn: vi.fn(() => fresh) };
    expect(spawnRelay(session, ["json"])).toBe(fresh);
    expect(session.spawn).toHaveBeenCalledWith(relayCommand(["json"]));
  });
});
