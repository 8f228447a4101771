import type { ApprovalHook, ToolSpec } from "@codeaction/core";
import { buildStubs } from "@codeaction/core/internal";
import { UsageError } from "../errors/usage-error.ts";

/**
 * `--allow TOOL` and `--deny TOOL` as an approval hook, for servers with no one to ask. A rule names
 * a tool by its own name or by its Python function name. `--deny` always wins; once any `--allow`
 * is given, only the allowed tools run. Without rules every call runs (undefined: no hook).
 * A rule naming no tool is a UsageError listing the tools, so a typo cannot silently allow nothing.
 */
export function approvalRules(
  tools: readonly ToolSpec[],
  rules: { allow: string[]; deny: string[] },
  command: string,
): ApprovalHook | undefined {
  if (rules.allow.length === 0 && rules.deny.length === 0) return undefined;
  const stubs = buildStubs([...tools]);
  const toolNameOf = new Map<string, string>();
  for (const stub of stubs) {
    toolNameOf.set(stub.toolName, stub.toolName);
    toolNameOf.set(stub.functionName, stub.toolName);
  }
  const resolve = (names: string[], option: string) =>
    new Set(
      names.map((name) => {
        const toolName = toolNameOf.get(name);
        if (toolName === undefined) {
          const known = stubs.map((stub) => stub.toolName).join(", ") || "none";
          throw new UsageError({
            command,
            message: `${option} ${JSON.stringify(name)} names no tool; the tools are: ${known}`,
          });
        }
        return toolName;
      }),
    );
  const allowed = resolve(rules.allow, "--allow");
  const denied = resolve(rules.deny, "--deny");
  return ({ tool }) => {
    if (denied.has(tool)) return { approved: false, reason: `${tool} is denied by the server's --deny rule` };
    if (allowed.size > 0 && !allowed.has(tool)) {
      return { approved: false, reason: `${tool} is not in the server's --allow list` };
    }
    return true;
  };
}
