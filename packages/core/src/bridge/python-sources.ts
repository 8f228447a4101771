import { readFileSync } from "node:fs";
import { coreAssets } from "../core-assets.ts";

/** The container side of the bridge, read once from the .py files beside this one (core-assets.ts). */
const bootstrapMarker = '"@@CODEACTION_BOOTSTRAP@@"';
const stubsMarker = "# @@CODEACTION_STUBS@@";

let relay: string | undefined;
let toolsModule: string | undefined;

/** The relay's parts, in the order they make its one source (relay.py says what each holds). */
const relayParts = ["relay.py", "relay-io.py", "relay-channels.py", "relay-loop.py"] as const;

/**
 * The relay's source, run as `python3 -I -S -c <source>`: its parts joined, with bootstrap.py's
 * source in place of the BOOTSTRAP marker (a JSON string is a valid Python string literal).
 */
export function relaySource(): string {
  relay ??= joinBootstrap(
    relayParts.map((part) => readFileSync(coreAssets.path(part), "utf8")).join("\n"),
    readFileSync(coreAssets.path("bootstrap.py"), "utf8"),
  );
  return relay;
}

function joinBootstrap(relayText: string, bootstrapText: string): string {
  const index = relayText.indexOf(bootstrapMarker);
  if (index < 0) throw new Error(`relay.py lost its BOOTSTRAP = ${bootstrapMarker} line`);
  return `${relayText.slice(0, index)}${JSON.stringify(bootstrapText)}${relayText.slice(index + bootstrapMarker.length)}`;
}

/** The `codeaction_tools` module with the generated stubs in place of its marker line. */
export function toolsModuleSource(stubsSource: string): string {
  toolsModule ??= readFileSync(coreAssets.path("codeaction_tools.py"), "utf8");
  const index = toolsModule.lastIndexOf(stubsMarker);
  if (index < 0) throw new Error(`codeaction_tools.py lost its ${stubsMarker} line`);
  return `${toolsModule.slice(0, index)}${stubsSource}\n${toolsModule.slice(index + stubsMarker.length)}`;
}
