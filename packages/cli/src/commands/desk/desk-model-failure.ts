import { providerMessage } from "@codeaction/core";
import { type ModelCallSettings, modelCallFailure, triesText } from "../../model-failure.ts";

/**
 * A failed model call told to an analyst on the desk: the same causes as the command's messages
 * (model-failure.ts: the key, the model's name, the rate limit, the provider, no server reached,
 * no answer in time), each naming where the desk sent the question, in plain words, with a fix an
 * analyst can act on or pass on to whoever started the desk (who holds its key and options).
 * Undefined when the error is not a failed model call.
 */
export function describeModelFailure(
  error: unknown,
  settings: ModelCallSettings,
): { message: string; fix: string } | undefined {
  const found = modelCallFailure(error);
  if (!found) return undefined;
  const { place, retries } = settings;
  const tries = triesText(retries);
  const kind = found.failure;
  const said = providerMessage(found.cause ?? found);
  const starter = "whoever started the desk";
  switch (kind.cause) {
    case "timeout":
      return {
        message: `The model did not answer: the model at ${place} did not answer within ${settings.timeoutSeconds} s (${tries}).`,
        fix: `The model's server may be busy or stopped. Ask again in a moment; if it keeps happening, ${starter} can check that server or give it longer (--model-timeout).`,
      };
    case "key":
      return {
        message: `The model at ${place} refused the desk's key (HTTP ${kind.status}).`,
        fix: `The key the desk uses for the model is wrong or no longer valid: ${starter} sets a valid one and starts the desk again. Asking again will not help until then.`,
      };
    case "model-name": {
      const model = settings.model ? ` ${settings.model}` : " the desk asked for";
      return {
        message: `The model at ${place} does not have the model${model} (HTTP 404).`,
        fix: `${capitalised(starter)} chooses the model (--model): they start the desk again with one this server has.`,
      };
    }
    case "rate-limit":
      return {
        message: `The model at ${place} is receiving too many questions right now (HTTP 429, ${tries}).`,
        fix: "Wait a minute, then ask again.",
      };
    case "provider":
      return {
        message: `The model's provider at ${place} had a problem on its side (HTTP ${kind.status}, ${tries}).`,
        fix: `Nothing is wrong with your question or your data: the provider may be busy or down. Try again later.`,
      };
    case "unreachable":
      return {
        message: `The desk could not reach the model at ${place} (${kind.code}, ${tries}).`,
        fix: `Check that the model's server is running and that this machine can reach it; ${starter} set its address.`,
      };
    default:
      return {
        message: `The model at ${place} could not answer${kind.status === undefined ? "" : ` (HTTP ${kind.status})`}: ${said}.`,
        fix: `Ask again in a moment; if it keeps happening, ${starter} can check the model's key, address and name.`,
      };
  }
}

function capitalised(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}
