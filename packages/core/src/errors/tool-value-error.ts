import { CodeActionError } from "./code-action-error.ts";

const code = "tool-value-unmappable";
const marker = "codeaction.core.tool-value-error";
const symbol = Symbol.for(marker);

/**
 * A tool returned a value with no Python (or JSON) form: a function, a class instance without
 * toJSON, a cycle. Names the tool and where in the value, so the tool's author can fix it; the
 * program (or the model) sees the message instead of a silently wrong string.
 */
export class ToolValueError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly tool: string;
  readonly path: string;

  constructor(options: { tool: string; path: string; problem: string; fix: string }) {
    super(
      `The tool '${options.tool}' returned a value that cannot be passed on: ${options.path} is ${options.problem}. Fix the tool: ${options.fix}.`,
      { code },
    );
    this.name = "ToolValueError";
    this.tool = options.tool;
    this.path = options.path;
  }

  static override isInstance(error: unknown): error is ToolValueError {
    return CodeActionError.hasMarker(error, marker);
  }
}
