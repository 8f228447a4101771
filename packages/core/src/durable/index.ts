// @codeaction/core/durable: what a durable record of one's own is built from, the same pieces core's
// run store and the codeaction command's journal use: a chained log (each line linked to the one
// before it by a SHA-256 or HMAC tag; appending, with rotation, and its verification), a lock between writers,
// files created private (0600 in a 0700 folder, never through a link), and the check of a kept run
// state's signature. Loads only Node's own modules.

export { privateFolder, writePrivateFile } from "../private-file.ts";
export type { ChainedAppend } from "./chained-log.ts";
export { appendChained, openChainedLog } from "./chained-log.ts";
export { withFileLock } from "./file-lock.ts";
export type { ChainEnd, ChainLink } from "./record-chain.ts";
export { chainEndOf, chainedLine } from "./record-chain.ts";
export { verifyState } from "./run-state.ts";
export type { ChainBreak, LineOfFile, Verification } from "./verify-chain.ts";
export { verifyChain } from "./verify-chain.ts";
