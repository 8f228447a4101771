import { readFileSync } from "node:fs";
import { coreAssets } from "../core-assets.ts";

/** The container side of the bridge, read once from the .py files beside this one (core-assets.ts). */
const bootstrapMarker = '"@@CODEACTION_BOOTSTRAP@@"';
const stubsMarker = "# @@CODEACTION_STUBS@@";

let relay: string | undefined;
let toolsModule: string | undefined;

/** The relay's modules, in the order they make its one source (relay.py says what each holds). */
export const relayModules = [
  "relay.py",
  "relay_io.py",
  "relay_channels.py",
  "relay_steps.py",
  "relay_loop.py",
] as const;

/** A line by which one relay module imports another: dropped when they are joined into one source. */
const relayImport = /^from (relay|relay_io|relay_channels|relay_steps|relay_loop) import [^()]+$/;

/**
 * The relay's source, run as `python3 -I -S -c <source>`: its modules joined, their imports of one
 * another dropped (the names are then the one source's own), with bootstrap.py's source in place of
 * the BOOTSTRAP marker (a JSON string is a valid Python string literal).
 */
export function relaySource(): string {
  relay ??= joinBootstrap(
    relayModules
      .map((name) => withoutRelayImports(name, readFileSync(coreAssets.path(name), "utf8")))
      .join("\n"),
    readFileSync(coreAssets.path("bootstrap.py"), "utf8"),
  );
  return relay;
}

/** A module's text without its `from relay... import` lines; one that spans lines is refused. */
export function withoutRelayImports(name: string, text: string): string {
  const lines = text.split("\n");
  const spanning = lines.find((line) => /^from relay\w* import .*\($/.test(line));
  if (spanning !== undefined) {
    throw new Error(
      `${name}: a relay import in parentheses cannot be joined; write one line per import (${spanning})`,
    );
  }
  return lines.filter((line) => !relayImport.test(line)).join("\n");
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
