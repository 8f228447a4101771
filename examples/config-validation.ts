// The seed's settings check, without starting a container: every sandbox gets network "none" unless
// you name another, and a wrong key (network_mode, the spelling older docs used) is refused with a
// hint instead of being ignored. Run: node examples/config-validation.ts
import { parseSandboxConfig, SandboxConfigError } from "@codeaction/sandbox";

for (const settings of [{}, { memoryLimit: "512M" }, { network_mode: "none" }]) {
  try {
    const config = parseSandboxConfig(settings);
    console.log(
      `${JSON.stringify(settings)}: network=${config.network}, pidsLimit=${config.pidsLimit}, diskLimit=${config.diskLimit}`,
    );
  } catch (error) {
    if (!SandboxConfigError.isInstance(error)) throw error;
    console.log(`${JSON.stringify(settings)}: ${error.name}: ${error.message}`);
  }
}
