import type { ApprovalHook, ToolSpec } from "@codeaction/core";
import { buildStubs } from "@codeaction/core/stubs";
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
  const refusal = refusalOf(tools, rules, command);
  if (refusal === undefined) return undefined;
  return ({ tool }) => {
    const reason = refusal(tool);
    return reason === undefined ? true : { approved: false, reason };
  };
}

/**
 * The tools the rules let run, in order: what the server offers (names in run_program's
 * description, list_functions). A denied tool stays importable, so a program that guesses its name
 * still gets ToolDenied with the reason rather than a NameError.
 */
export function offeredTools(
  tools: readonly ToolSpec[],
  rules: { allow: string[]; deny: string[] },
  command: string,
): ToolSpec[] {
  const refusal = refusalOf(tools, rules, command);
  return refusal === undefined ? [...tools] : tools.filter((tool) => refusal(tool.name) === undefined);
}

/** Why the rules refuse a tool (by its own name), or undefined when it may run; undefined without rules. */
function refusalOf(
  tools: readonly ToolSpec[],
  rules: { allow: string[]; deny: string[] },
  command: string,
): ((tool: string) => string | undefined) | undefined {
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
  return (tool) => {
    if (denied.has(tool)) return `${tool} is denied by the server's --deny rule`;
    if (allowed.size > 0 && !allowed.has(tool)) return `${tool} is not in the server's --allow list`;
    return undefined;
  };
}
