import { z } from "zod";
import { type DiscoverySettings, defaultDiscoverySettings } from "./tool-index.ts";

/**
 * `codeAction.discovery`: when the prompt carries an index and a ```search step instead of every
 * stub (tool-index.ts). `false` never turns it on; `{ maxTools: 0 }` always does (for any tools).
 */
export type DiscoveryOptions = false | Partial<DiscoverySettings>;

export const discoveryOptionsSchema = z
  .union([
    z.literal(false),
    z.strictObject({
      maxStubTokens: z.number().int().min(100).default(defaultDiscoverySettings.maxStubTokens),
      maxTools: z.number().int().min(0).default(defaultDiscoverySettings.maxTools),
      maxSearches: z.number().int().min(1).max(10).default(defaultDiscoverySettings.maxSearches),
      resultsPerQuery: z.number().int().min(1).max(20).default(defaultDiscoverySettings.resultsPerQuery),
    }),
  ])
  .default(defaultDiscoverySettings);
