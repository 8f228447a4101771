import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { readReplyProgram } from "../turn/extract-program.ts";
import { fencedBlocks } from "../turn/reply-fences.ts";
import { textOf, totalUsage, usageOf } from "../turn/turn-messages.ts";
import type { Attempt } from "../types.ts";
import type { DiscoveryPlan } from "./tool-index.ts";

/**
 * The model's side of discovery (see tool-index.ts): a reply that holds a ```search block and no
 * program is answered on the host with the best matches' full signatures, and the model is asked
 * again, within the same attempt and without a container. After `maxSearches` such replies the
 * next one goes on as any reply does (a search then counts as a reply with no program).
 */

/** Queries read from one ```search block, and the characters of one answer, at most. */
const maxQueries = 10;
const maxQueryCharacters = 200;
const maxAnswerCharacters = 40_000;

/** An opening line of a search block: its marker, "search" (any case) and nothing else. */
const isSearchOpening = (opening: { tag: string; rest: string }) =>
  opening.tag.toLowerCase() === "search" && /^[ \t]*$/.test(opening.rest);

/**
 * The queries of a reply that asks to search (a ```search block and no program to run), else
 * undefined (also for a reply over maxReplyCharacters, which readReplyProgram refuses unread).
 */
export function readSearchQueries(reply: string): string[] | undefined {
  const read = readReplyProgram(reply);
  if (read.ok || read.problem === "reply-too-long") return undefined;
  const queries = fencedBlocks(reply, isSearchOpening)
    .flatMap((block) => block.body.split("\n"))
    .map((line) => line.trim().replace(/^[-*]\s+/, ""))
    .filter((line) => line !== "")
    .map((line) => line.slice(0, maxQueryCharacters));
  return queries.length > 0 ? queries.slice(0, maxQueries) : undefined;
}

/**
 * The answer to one search: for each query, the best matches' signatures (a function already shown
 * in this attempt is named, not repeated), bounded in size.
 */
export function answerSearch(
  plan: DiscoveryPlan,
  queries: string[],
  shown: Set<string>,
  searchesLeft: number,
): string {
  const parts: string[] = ["Search results (full signatures; every function is already imported):"];
  let characters = parts[0]?.length ?? 0;
  for (const query of queries) {
    const matches = plan.search.search(query, { limit: plan.settings.resultsPerQuery });
    const lines = [`# ${JSON.stringify(query)}`];
    if (matches.length === 0) lines.push("# no function matches these words; try others.");
    for (const { stub } of matches) {
      const text = shown.has(stub.functionName) ? `# ${stub.functionName}: shown above` : stub.signature;
      if (characters + text.length > maxAnswerCharacters) {
        lines.push("# (more results were cut: the answer is at its size limit)");
        break;
      }
      shown.add(stub.functionName);
      lines.push(text);
      characters += text.length;
    }
    parts.push(lines.join("\n\n"));
  }
  parts.push(
    searchesLeft > 0
      ? `Now write the program in one \`\`\`python block (or search again: ${searchesLeft} searches left).`
      : "Now write the program in one ```python block (no searches are left).",
  );
  return parts.join("\n\n");
}

/**
 * Calls the model until its reply is not a search (or the searches are used up), answering each
 * search and adding both messages to `messages` (the sample's conversation, so a repair keeps
 * them). Returns the last reply and the usage of every call.
 */
export async function askWithSearches(options: {
  plan: DiscoveryPlan | undefined;
  messages: BaseMessage[];
  ask: () => Promise<BaseMessage>;
  onSearch?: (queries: string[]) => void;
}): Promise<{ reply: BaseMessage; usage: Attempt["usage"] }> {
  const { plan, messages, ask } = options;
  let reply = await ask();
  if (!plan) return { reply, usage: usageOf(reply) };
  const usages = [usageOf(reply)];
  const shown = new Set<string>();
  for (let search = 1; search <= plan.settings.maxSearches; search += 1) {
    const replyText = textOf(reply.content);
    const queries = readSearchQueries(replyText);
    if (!queries) break;
    options.onSearch?.(queries);
    const answer = answerSearch(plan, queries, shown, plan.settings.maxSearches - search);
    messages.push(new AIMessage({ content: replyText }), new HumanMessage(answer));
    reply = await ask();
    usages.push(usageOf(reply));
  }
  const reported = usages.some((usage) => usage !== undefined);
  return { reply, usage: reported ? totalUsage(usages) : undefined };
}
