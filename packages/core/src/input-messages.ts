import {
  type BaseMessage,
  type BaseMessageLike,
  coerceMessageLikeToMessage,
  isBaseMessage,
} from "@langchain/core/messages";
import type { AgentInput } from "./types.ts";

const roles: Record<string, "human" | "ai" | "system"> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  system: "system",
};

/**
 * The input of a turn as LangChain messages. Takes what @langchain/core takes as a message-like:
 * `BaseMessage`s, `{ role, content }` with role user, human, assistant, ai or system,
 * `[role, content]` tuples and plain strings (a user message); content is a string or an array of
 * text parts. The whole input may also be one string, one message (`new HumanMessage("...")`, as a
 * LangChain chat model takes it) or an array of message-likes. Anything else
 * is refused with a TypeError naming the message and what to send instead.
 */
export function toMessages(input: AgentInput | string | BaseMessage | BaseMessageLike[]): BaseMessage[] {
  const list: unknown =
    typeof input === "string" || isBaseMessage(input)
      ? [input]
      : Array.isArray(input)
        ? input
        : (input as AgentInput | undefined)?.messages;
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError(
      'invoke/stream take { messages: [{ role: "user", content: "..." }] } (or a string, one message, or an array of messages) with at least one message.',
    );
  }
  return list.map((message: unknown, index) => toMessage(message, `messages[${index}]`));
}

function toMessage(message: unknown, where: string): BaseMessage {
  if (isBaseMessage(message)) {
    checkContent(message.content, where);
    if (!["human", "ai", "system"].includes(message.getType())) {
      throw new TypeError(
        `${where} is a ${message.getType()} message; send user, assistant or system messages.`,
      );
    }
    return message;
  }
  if (typeof message === "string") return coerceMessageLikeToMessage(message);
  const [role, content] = Array.isArray(message)
    ? [message[0], message[1]]
    : typeof message === "object" && message !== null
      ? [(message as { role?: unknown }).role, (message as { content?: unknown }).content]
      : [undefined, undefined];
  const type = typeof role === "string" ? roles[role] : undefined;
  if (type === undefined) {
    throw new TypeError(
      `${where} has role ${JSON.stringify(role)}; use "user" (or "human"), "assistant" (or "ai") or "system", as { role, content } or [role, content].`,
    );
  }
  checkContent(content, where);
  return coerceMessageLikeToMessage([type, content] as BaseMessageLike);
}

function checkContent(content: unknown, where: string): void {
  if (typeof content === "string") return;
  if (!Array.isArray(content)) {
    throw new TypeError(
      `${where}.content must be a string or an array of text parts ({ type: "text", text }).`,
    );
  }
  content.forEach((part: unknown, index) => {
    const { type, text } = (typeof part === "object" && part !== null ? part : {}) as {
      type?: unknown;
      text?: unknown;
    };
    if (typeof part === "string" || (type === "text" && typeof text === "string")) return;
    throw new TypeError(
      `${where}.content[${index}] is a ${JSON.stringify(type ?? typeof part)} part; the agent reads text only. Send { type: "text", text } parts; to give the program an image or another file, pass its path in codeAction.dataFiles (read-only at /workspace/data), and files the program saves under /workspace/out come back as result.files (limits: codeAction.outputFiles).`,
    );
  });
}
