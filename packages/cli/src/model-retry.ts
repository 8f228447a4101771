import { setTimeout as sleep } from "node:timers/promises";
import type { CallbackManagerForChainRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BaseMessage } from "@langchain/core/messages";
import { RunnableBinding, type RunnableConfig, RunnableRetry } from "@langchain/core/runnables";
import { isRetryable, type ModelRetryNotice, retryDelayMs } from "./model-failure.ts";

type RetryHandler = (error: unknown, input: unknown, notice?: ModelRetryNotice) => unknown;

/**
 * A chat model that tries a failed call again, up to `retries` times, on a fixed schedule
 * (`retryDelayMs`), only for failures another try may fix (`isRetryable`), and says so before each
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

  /** `model` with up to `retries` retries, each announced to `onRetry` before its wait. */
  static wrap(
    model: ConstructorParameters<typeof RunnableRetry<BaseLanguageModelInput, BaseMessage>>[0]["bound"],
    options: { retries: number; onRetry: (notice: ModelRetryNotice) => void },
  ): ModelRetry {
    return new ModelRetry({
      bound: model,
      kwargs: {},
      config: {},
      maxAttemptNumber: options.retries + 1,
      onFailedAttempt: (_error: unknown, _input: unknown, notice?: ModelRetryNotice) => {
        if (notice) options.onRetry(notice);
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
        const notice = { error, retry: attempt, retries, delayMs: retryDelayMs(attempt) };
        await (this.onFailedAttempt as RetryHandler)(error, input, notice);
        await sleep(notice.delayMs, undefined, config?.signal ? { signal: config.signal } : {});
      }
    }
  }
}
