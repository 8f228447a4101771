import type { ModelOption } from "@codeaction/core";
import { CliError } from "./errors/cli-error.ts";
import type { ModelChoice } from "./model-choice.ts";
import { describeRetry } from "./model-failure.ts";
import type { RetryWait } from "./model-retry.ts";

/**
 * The model of `ask` and `chat`: a live one built from its provider string (which never retries on
 * its own) wrapped to try a failed call again up to `retries` times, each retry announced through
 * `onRetry` ("the model answered HTTP 500; retry 1 of 2 in 1 s"); or the recorded replies of a
 * replay, which are never retried.
 */
export async function loadModel(
  choice: ModelChoice,
  options: {
    retries: number;
    onRetry: (line: string) => void;
    env: NodeJS.ProcessEnv;
    /** How the wait before a retry is spent (CliContext.wait); a timer by default. */
    wait?: RetryWait | undefined;
    /** Seconds one model call may take (--model-timeout); the library's 90 s by default. */
    timeoutSeconds?: number | undefined;
  },
): Promise<ModelOption> {
  if (choice.kind === "live") {
    const { loadModel: loadProviderModel } = await import("@codeaction/core");
    const model = await loadProviderModel(choice.model, options.env, {
      timeoutSeconds: options.timeoutSeconds,
    });
    if (options.retries === 0) return model;
    const { ModelRetry } = await import("./model-retry.ts");
    return ModelRetry.wrap(model, {
      retries: options.retries,
      onRetry: (notice) => options.onRetry(describeRetry(notice)),
      wait: options.wait,
    });
  }
  const { ScriptedChatModel } = await import("@codeaction/core/testing");
  try {
    return await ScriptedChatModel.fromReplayFile(choice.file);
  } catch (error) {
    throw new CliError(
      `The replay file ${choice.file} is not a recording: ${(error as Error).message.replace(/^.*?: a replay file/, "a replay file")}. A recording is {"replies": [...]}.`,
      { code: "replay-invalid", cause: error },
    );
  }
}
