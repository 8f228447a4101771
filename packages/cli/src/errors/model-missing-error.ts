import { firstRunQuestion, firstRunReplayPath } from "../shipped-replay.ts";
import { CliError } from "./cli-error.ts";

const marker = "codeaction.cli.model-missing-error";
const symbol = Symbol.for(marker);

/** `ask` has neither a live model (OPENAI_API_KEY) nor a recording (--replay). */
export class ModelMissingError extends CliError {
  protected readonly [symbol] = true;

  /** `cwd`: the command's folder, for the shipped recording's path as the user would type it. */
  constructor(options: { cwd: string }) {
    super(
      `No model to ask: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local OpenAI-compatible server such as Ollama or vLLM) for a live model, or pass --replay FILE to play recorded replies. One ships with codeaction: codeaction ask --replay ${firstRunReplayPath(options.cwd)} "${firstRunQuestion}"`,
      { code: "model-missing" },
    );
    this.name = "ModelMissingError";
  }

  static override isInstance(error: unknown): error is ModelMissingError {
    return CliError.hasMarker(error, marker);
  }
}
