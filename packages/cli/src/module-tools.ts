import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { CliError } from "./errors/cli-error.ts";

/** A LangChain tool, whichever copy of @langchain/core made it: a name, a schema and invoke(). */
function isLangChainTool(value: unknown): value is StructuredToolInterface {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { name?: unknown }).name === "string" &&
    typeof (value as { invoke?: unknown }).invoke === "function" &&
    "schema" in value
  );
}

/**
 * The LangChain tools a module exports (`--module ./tools.js`): every export that is a tool, and
 * the tools of an exported array (a default export of `[toolA, toolB]`), in the order of the export
 * names (as a module namespace lists them). A module
 * that cannot be imported, or exports no tool, is a CliError saying what to export.
 */
export async function loadModuleTools(path: string, cwd: string): Promise<StructuredToolInterface[]> {
  const url = pathToFileURL(resolve(cwd, path)).href;
  let exported: Record<string, unknown>;
  try {
    exported = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(
      `--module ${path} could not be imported: ${(error as Error).message}. Give the path of a JavaScript module (ESM, or TypeScript on Node 22.18+) that exports LangChain tools.`,
      { code: "module-invalid", cause: error },
    );
  }
  const tools = Object.values(exported)
    .flatMap((value) => (Array.isArray(value) ? value : [value]))
    .filter(isLangChainTool);
  const unique = [...new Set(tools)];
  if (unique.length === 0) {
    throw new CliError(
      `--module ${path} exports no LangChain tool. Export each tool() (export const lookup = tool(...)), or an array of them as the default export.`,
      { code: "module-invalid" },
    );
  }
  return unique;
}
