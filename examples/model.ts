import { fileURLToPath } from "node:url";
import type { ModelOption } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";

/**
 * The model an example talks to. With OPENAI_API_KEY set: the live "openai:gpt-5-mini"
 * (OPENAI_BASE_URL points it at a local OpenAI-compatible server). Without: the recorded
 * replies in examples/replays/<name>.json, and a line on stderr saying so.
 */
export async function exampleModel(name: string): Promise<ModelOption> {
  if (process.env.OPENAI_API_KEY?.trim()) return "openai:gpt-5-mini";
  const replay = fileURLToPath(new URL(`./replays/${name}.json`, import.meta.url));
  process.stderr.write(
    `model: a REPLAY of recorded replies from examples/replays/${name}.json ` +
      "(not a live model; set OPENAI_API_KEY to ask openai:gpt-5-mini)\n",
  );
  return ScriptedChatModel.fromReplayFile(replay);
}
