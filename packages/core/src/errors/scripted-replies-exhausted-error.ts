import { CodeActionError } from "./code-action-error.ts";

const code = "scripted-replies-exhausted";
const marker = "codeaction.core.scripted-replies-exhausted-error";
const symbol = Symbol.for(marker);

/** A scripted model (testing) was called more often than it has replies. */
export class ScriptedRepliesExhaustedError extends CodeActionError {
  protected readonly [symbol] = true;
  constructor(options: { callNumber: number; replyCount: number; lastMessage: string }) {
    super(
      `The scripted model has no reply left for call #${options.callNumber} (it was given ${options.replyCount}). ` +
        `The call's last message began: ${JSON.stringify(options.lastMessage.slice(0, 200))}. Add a reply to the script.`,
      { code },
    );
    this.name = "ScriptedRepliesExhaustedError";
  }

  static override isInstance(error: unknown): error is ScriptedRepliesExhaustedError {
    return CodeActionError.hasMarker(error, marker);
  }
}
