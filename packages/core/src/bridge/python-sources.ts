import { readFileSync } from "node:fs";

/** The container side of the bridge, read once from the .py files beside this one. */
const relayPath = new URL("./relay.py", import.meta.url);
const toolsModulePath = new URL("./codeaction_tools.py", import.meta.url);
const stubsMarker = "# @@CODEACTION_STUBS@@";

let relay: string | undefined;
let toolsModule: string | undefined;

/** The relay's source, run as `python3 -I -c <source>`. */
export function relaySource(): string {
  relay ??= readFileSync(relayPath, "utf8");
  return relay;
}

/** The `codeaction_tools` module with the generated stubs in place of its marker line. */
export function toolsModuleSource(stubsSource: string): string {
  toolsModule ??= readFileSync(toolsModulePath, "utf8");
  const index = toolsModule.lastIndexOf(stubsMarker);
  if (index < 0) throw new Error(`codeaction_tools.py lost its ${stubsMarker} line`);
  return `${toolsModule.slice(0, index)}${stubsSource}\n${toolsModule.slice(index + stubsMarker.length)}`;
}
