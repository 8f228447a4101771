export { ScriptedRepliesExhaustedError } from "../errors/scripted-replies-exhausted-error.ts";
export type { AnthropicFixture, AnthropicFixtureBlock } from "./anthropic-fixture.ts";
export { startAnthropicFixture } from "./anthropic-fixture.ts";
export type { OpenAIFixture, OpenAIFixtureRequest } from "./openai-fixture.ts";
export { startOpenAIFixture } from "./openai-fixture.ts";
export type { ScriptedCall, ScriptedReply } from "./scripted-chat-model.ts";
export { ScriptedChatModel } from "./scripted-chat-model.ts";
