import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import type { ConversationTurn } from "../prompt/prompt.ts";
import type { Attempt } from "../types.ts";

/** The question (the last user message), the earlier user/assistant text, and any system text. */
export function splitConversation(messages: BaseMessage[]): {
  conversation: ConversationTurn[];
  question: string;
  extraInstructions: string[];
} {
  const turns: ConversationTurn[] = [];
  const extraInstructions: string[] = [];
  for (const message of messages) {
    const type = message.getType();
    const content = textOf(message.content);
    if (type === "human") turns.push({ role: "user", content });
    else if (type === "ai" && content.trim()) turns.push({ role: "assistant", content });
    else if (type === "system") extraInstructions.push(content);
  }
  const questionIndex = turns.findLastIndex((turn) => turn.role === "user");
  if (questionIndex === -1) {
    throw new TypeError("A code-action turn needs a user message to answer: input.messages has none.");
  }
  return {
    conversation: turns.slice(0, questionIndex),
    question: turns[questionIndex]?.content ?? "",
    extraInstructions,
  };
}

/** The text of a message's content: its string, or its text parts joined. */
export function textOf(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) =>
      typeof part === "string"
        ? part
        : part.type === "text" && typeof part.text === "string"
          ? part.text
          : "",
    )
    .join("");
}

/** The token usage a model's reply reports, if any. */
export function usageOf(reply: BaseMessage): Attempt["usage"] {
  const usage = (reply as AIMessage).usage_metadata;
  if (!usage) return undefined;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    totalTokens: usage.total_tokens,
  };
}

/** Token usage summed over model calls (fields no call reported stay out): an attempt's, over its searches. */
export function totalUsage(usages: Array<Attempt["usage"]>): NonNullable<Attempt["usage"]> {
  const total: NonNullable<Attempt["usage"]> = {};
  for (const usage of usages) {
    for (const key of ["inputTokens", "outputTokens", "totalTokens"] as const) {
      const value = usage?.[key];
      if (typeof value === "number") total[key] = (total[key] ?? 0) + value;
    }
  }
  return total;
}
