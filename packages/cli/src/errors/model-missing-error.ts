import { CliError } from "./cli-error.ts";

/** `ask` has neither a live model (OPENAI_API_KEY) nor a recording (--replay). */
export class ModelMissingError extends CliError {
  constructor() {
    super({
      code: "model-missing",
      message:
        "No model to ask: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local OpenAI-compatible server such as Ollama or vLLM) for a live model, or pass --replay FILE to play recorded replies (examples/replays/ has one for the demo question).",
    });
    this.name = "ModelMissingError";
  }

  static override isInstance(error: unknown): error is ModelMissingError {
    return CliError.isInstance(error) && error.code === "model-missing";
  }
}
