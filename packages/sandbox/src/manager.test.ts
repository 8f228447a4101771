import { describe, expect, it } from "vitest";
import { SandboxError } from "./errors/sandbox-error.ts";
import { SandboxManager } from "./manager.ts";

// One disposal verb: close(). The older names stay as deprecated aliases and close the manager
// the same way, so a session asked for afterwards is refused before any Docker call.
describe("SandboxManager disposal", () => {
  for (const [name, dispose] of [
    ["close()", (manager: SandboxManager) => manager.close()],
    ["cleanupAll() (deprecated alias)", (manager: SandboxManager) => manager.cleanupAll()],
    ["Symbol.asyncDispose", (manager: SandboxManager) => manager[Symbol.asyncDispose]()],
  ] as const) {
    it(`${name} marks the manager closed: a later createSession is refused with code manager-closed`, async () => {
      const manager = new SandboxManager({ pool: 0 });
      await dispose(manager);
      const refusal = await manager.createSession().catch((error: unknown) => error);
      expect(SandboxError.isInstance(refusal)).toBe(true);
      expect(refusal).toMatchObject({
        code: "manager-closed",
        message: "This sandbox manager was cleaned up.",
      });
      await manager.close();
    });
  }
});
