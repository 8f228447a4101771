import { SandboxConfigError, SandboxManager } from "@codeaction/sandbox";
import { ConfigError } from "../errors/config-error.ts";

/**
 * A SandboxManager for settings a user of @codeaction/core gave: settings the sandbox package
 * refuses (an unknown key, a wrong type) are a ConfigError, like every other bad option of core,
 * with the sandbox's SandboxConfigError as its `cause`. Parsing starts nothing.
 */
export function newSandboxManager(
  ...[config, options]: ConstructorParameters<typeof SandboxManager>
): SandboxManager {
  try {
    return new SandboxManager(config, options);
  } catch (error) {
    if (!SandboxConfigError.isInstance(error)) throw error;
    throw new ConfigError({ message: error.message, cause: error });
  }
}
