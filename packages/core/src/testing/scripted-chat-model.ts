import { readFile } from "node:fs/promises";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { ScriptedRepliesExhaustedError } from "../errors/scripted-replies-exhausted-error.ts";

/** One scripted reply: text, or text with tool calls (for the tools pattern). */
export type ScriptedReply =
  | string
  | {
      content?: string;
      toolCalls?: { name: string; args: Record<string, unknown>; id?: string }[];
      usage?: { inputTokens: number; outputTokens: number };
    };

/** A call the scripted model received: the messages and the tools bound for it. */
export type ScriptedCall = { messages: BaseMessage[]; tools: unknown[] };

type ScriptedCallOptions = BaseChatModelCallOptions & { tools?: unknown[] };

/**
 * A chat model that plays a queue of replies, for tests and demos without a model service.
 * Records every call it receives; throws ScriptedRepliesExhaustedError when the queue is empty.
 * Supports bindTools, so the tools pattern can use it.
 */
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  readonly replies: ScriptedReply[];
  readonly calls: ScriptedCall[] = [];
  private next = 0;

  constructor(replies: ScriptedReply[]) {
    super({});
    this.replies = [...replies];
  }

  /** Reads `{"replies": [...]}` from a JSON file (the same reply format). */
  static async fromReplayFile(path: string): Promise<ScriptedChatModel> {
    const parsed: unknown = JSON.parse(await readFile(path, "utf8"));
    if (!parsed || typeof parsed !== "object" || !Array.isArray((parsed as { replies?: unknown }).replies)) {
      throw new TypeError(
        `${path}: a replay file is a JSON object {"replies": [...]}, with strings or {content, toolCalls}.`,
      );
    }
    return new ScriptedChatModel((parsed as { replies: ScriptedReply[] }).replies);
  }

  /** How many replies are left in the queue. */
  get remaining(): number {
    return this.replies.length - this.next;
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: BindToolsInput[]) {
    return this.withConfig({ tools } as Partial<ScriptedCallOptions>);
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    this.calls.push({ messages: [...messages], tools: options.tools ?? [] });
    const reply = this.replies[this.next];
    if (reply === undefined) {
      const last = messages.at(-1);
      throw new ScriptedRepliesExhaustedError({
        callNumber: this.calls.length,
        replyCount: this.replies.length,
        lastMessage: typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? ""),
      });
    }
    this.next += 1;
    const message = toMessage(reply, this.next);
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

function toMessage(reply: ScriptedReply, callNumber: number): AIMessage {
  if (typeof reply === "string") return new AIMessage({ content: reply });
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
    name: call.name,
    args: call.args,
    id: call.id ?? `call_${callNumber}_${index + 1}`,
    type: "tool_call" as const,
  }));
  return new AIMessage({
    content: reply.content ?? "",
    tool_calls: toolCalls,
    ...(reply.usage
      ? {
          usage_metadata: {
            input_tokens: reply.usage.inputTokens,
            output_tokens: reply.usage.outputTokens,
            total_tokens: reply.usage.inputTokens + reply.usage.outputTokens,
          },
        }
      : {}),
  });
}
