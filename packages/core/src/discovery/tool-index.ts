import type { StubbedTool } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { createToolSearch, type ToolSearch } from "./tool-search.ts";

/**
 * Progressive discovery: when a catalogue's stubs would crowd the prompt, the prompt carries a
 * compact index of the functions instead, and the model looks up full signatures with a ```search
 * reply before it writes its program (function-lookup.ts answers it, without a container). Every
 * stub stays importable: a program may call any function in the index, looked up or not.
 */

/** When discovery turns on, and how much a lookup may show. */
export type DiscoverySettings = {
  /** Stubs estimated above this many tokens turn discovery on; the index must fit in it too (default 4,000). */
  maxStubTokens: number;
  /** More tools than this turn discovery on, whatever their size (default 40). */
  maxTools: number;
  /** ```search replies answered per attempt before the model must write its program (default 3). */
  maxSearches: number;
  /** Functions shown per query, best first (default 5). */
  resultsPerQuery: number;
};

/** When discovery turns on (40 tools, or stubs estimated above 4,000 tokens) and how much a lookup shows. */
export const defaultDiscoverySettings: DiscoverySettings = {
  maxStubTokens: 4000,
  maxTools: 40,
  maxSearches: 3,
  resultsPerQuery: 5,
};

/** What a catalogue over the discovery budget needs: its search, its compact index, the settings. */
export type DiscoveryPlan = { search: ToolSearch; index: string; settings: DiscoverySettings };

/**
 * A conservative token estimate with no tokenizer: three characters a token (the o200k and cl100k
 * tokenizers average nearer four on Python stubs, so the estimate runs high, never low).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3);
}

/** The plan when the catalogue is over the budget (by count or by estimated stub tokens), else undefined. */
export function planDiscovery(
  tools: ToolSpec[],
  stubs: StubbedTool[],
  settings: DiscoverySettings | false,
): DiscoveryPlan | undefined {
  if (settings === false || tools.length === 0) return undefined;
  const stubTokens = estimateTokens(stubs.map((stub) => stub.signature).join("\n\n"));
  if (tools.length <= settings.maxTools && stubTokens <= settings.maxStubTokens) return undefined;
  const search = createToolSearch(tools, stubs);
  return { search, index: renderToolIndex(search, settings.maxStubTokens), settings };
}

type Group = { origin: string; entries: Array<{ tool: ToolSpec; stub: StubbedTool }> };

function groupsOf(search: ToolSearch): Group[] {
  const groups = new Map<string, Group>();
  for (const entry of search.entries) {
    const group = groups.get(entry.tool.origin) ?? { origin: entry.tool.origin, entries: [] };
    group.entries.push(entry);
    groups.set(entry.tool.origin, group);
  }
  return [...groups.values()];
}

/**
 * The richest index that fits `budget` estimated tokens: one line per function (name, arguments,
 * first sentence); else names by origin; else name prefixes with counts (`billing_*` (40)); else
 * only each origin's count.
 */
export function renderToolIndex(search: ToolSearch, budget: number): string {
  const groups = groupsOf(search);
  const levels = [lineIndex, nameIndex, prefixIndex];
  for (const level of levels) {
    const text = level(groups);
    if (estimateTokens(text) <= budget) return text;
  }
  return groups.map((group) => `${group.origin}: ${functions(group.entries.length)}`).join("\n");
}

function heading(group: Group): string {
  return `${group.origin} (${functions(group.entries.length)}):`;
}

function functions(count: number): string {
  return count === 1 ? "1 function" : `${count} functions`;
}

function lineIndex(groups: Group[]): string {
  return groups
    .map((group) =>
      [
        heading(group),
        ...group.entries.map(({ tool, stub }) => {
          const parameters = Object.values(stub.argumentNames).join(", ");
          return `- ${stub.functionName}(${parameters}): ${firstSentence(tool.description)}`;
        }),
      ].join("\n"),
    )
    .join("\n\n");
}

function nameIndex(groups: Group[]): string {
  return groups
    .map((group) => `${heading(group)} ${group.entries.map(({ stub }) => stub.functionName).join(", ")}`)
    .join("\n");
}

function prefixIndex(groups: Group[]): string {
  return groups
    .map((group) => {
      const prefixes = new Map<string, string[]>();
      for (const { stub } of group.entries) {
        const prefix = /^_*[A-Za-z0-9]+?(?=_|[A-Z]|$)/.exec(stub.functionName)?.[0] ?? stub.functionName;
        prefixes.set(prefix, [...(prefixes.get(prefix) ?? []), stub.functionName]);
      }
      const parts = [...prefixes].map(([prefix, names]) =>
        names.length === 1 ? (names[0] ?? prefix) : `${prefix}_* (${names.length})`,
      );
      return `${heading(group)} ${parts.join(", ")}`;
    })
    .join("\n");
}

/** A description's first sentence, at most 100 characters. */
function firstSentence(description: string): string {
  const sentence = (description.trim().split(/(?<=[.!?])\s|\n/)[0] ?? "").trim();
  return sentence.length > 100 ? `${sentence.slice(0, 97)}...` : sentence || "(no description)";
}

/** The prompt's functions section with discovery on: how to look up, then the index. */
export function renderDiscoverySection(plan: DiscoveryPlan, toolCount: number): string {
  const { maxSearches, resultsPerQuery } = plan.settings;
  return [
    `You have ${functions(toolCount)}, too many to show in full here; below is an index of them.`,
    "Every one is already imported in your program (`from codeaction_tools import *` is done for you),",
    "by the name the index shows, whether or not you looked it up.",
    "",
    "Before you write the program, look up the full signatures of the functions you need: reply with",
    "only a ```search block holding one query per line (words from the task, or exact function names),",
    "for example:",
    "```search",
    "exchange rate between two currencies",
    "```",
    `You get back the full signatures of the best ${resultsPerQuery} matches per query, then write the program.`,
    `You may search up to ${maxSearches} times before each program.`,
    "Call functions with keyword arguments. They return Python values (lists, dicts, numbers, strings), not JSON text.",
    "They run outside the sandbox, on the user's side; they are the only source of data.",
    "",
    "Index:",
    plan.index,
  ].join("\n");
}
