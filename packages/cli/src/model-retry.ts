import { setTimeout as sleep } from "node:timers/promises";
import type { CallbackManagerForChainRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BaseMessage } from "@langchain/core/messages";
import { RunnableBinding, type RunnableConfig, RunnableRetry } from "@langchain/core/runnables";
import { isRetryable, type ModelRetryNotice, retryAfterMs, retryDelayMs } from "./model-failure.ts";

type RetryHandler = (
  error: unknown,
  input: unknown,
  notice?: ModelRetryNotice,
  signal?: AbortSignal,
) => unknown;

/** How the wait before a retry is spent: a timer that ends early, rejecting, on `signal`'s abort. */
export type RetryWait = (milliseconds: number, signal: AbortSignal | undefined) => Promise<void>;

const timerWait: RetryWait = async (milliseconds, signal) => {
  await sleep(milliseconds, undefined, signal ? { signal } : {});
};

/**
 * A chat model that tries a failed call again, up to `retries` times, on a fixed schedule
 * (`retryDelayMs`, or the provider's `Retry-After` up to 60 s), only for failures another try may fix (`isRetryable`), and says so before each
 * wait through `onRetry`. A RunnableRetry, so the tools pattern binds its tools through it; an
 * aborted call is not tried again and the wait ends with the abort.
 */
export class ModelRetry extends RunnableRetry<BaseLanguageModelInput, BaseMessage> {
  static override lc_name() {
    return "ModelRetry";
  }

  constructor(
    fields: ConstructorParameters<typeof RunnableRetry<BaseLanguageModelInput, BaseMessage>>[0] & {
      onFailedAttempt?: RetryHandler;
    },
  ) {
    super(fields);
  }

  /**
   * `model` with up to `retries` retries, each announced to `onRetry` before its wait (`wait`, a
   * timer by default). The wait is done by the failed-attempt handler, which survives the rebinding
   * that binds the tools pattern's tools.
   */
  static wrap(
    model: ConstructorParameters<typeof RunnableRetry<BaseLanguageModelInput, BaseMessage>>[0]["bound"],
    options: { retries: number; onRetry: (notice: ModelRetryNotice) => void; wait?: RetryWait | undefined },
  ): ModelRetry {
    const wait = options.wait ?? timerWait;
    return new ModelRetry({
      bound: model,
      kwargs: {},
      config: {},
      maxAttemptNumber: options.retries + 1,
      onFailedAttempt: async (
        _error: unknown,
        _input: unknown,
        notice?: ModelRetryNotice,
        signal?: AbortSignal,
      ) => {
        if (!notice) return;
        options.onRetry(notice);
        await wait(notice.delayMs, signal);
      },
    });
  }

  protected override async _invoke(
    input: BaseLanguageModelInput,
    config?: Partial<RunnableConfig>,
    runManager?: CallbackManagerForChainRun,
  ): Promise<BaseMessage> {
    const retries = Math.max(this.maxAttemptNumber - 1, 0);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const attemptConfig = this._patchConfigForRetry(attempt, config, runManager);
        return await RunnableBinding.prototype.invoke.call(this, input, attemptConfig);
      } catch (error) {
        if (attempt > retries || config?.signal?.aborted || !isRetryable(error)) throw error;
        // A provider's Retry-After (bounded) is followed; else 1 s, 2 s, 4 s...
        const delayMs = retryAfterMs(error) ?? retryDelayMs(attempt);
        const notice = { error, retry: attempt, retries, delayMs };
        await (this.onFailedAttempt as RetryHandler)(error, input, notice, config?.signal);
      }
    }
  }
}
