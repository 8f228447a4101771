import { createHash, randomBytes } from "node:crypto";

/** How long a login address (`desk --open`) may wait before it is used. */
export const loginLifetimeMs = 60_000;
/** The most login addresses waiting at once; the oldest goes first. */
const maxWaiting = 16;

/** Single-use, short-lived login nonces: what `desk --open` puts on the browser's command line instead of the token. */
export type LoginNonces = {
  /** A new nonce, good once within `loginLifetimeMs`. */
  issue(): string;
  /** True once for a nonce issued and not yet used nor expired; it is used up either way. */
  redeem(nonce: string): boolean;
};

/**
 * The nonces are kept by their SHA-256 (a lookup by the secret itself could leak it through timing),
 * with the time they were issued, read from `now` (the tests give their own clock).
 */
export function loginNonces(options: { now?: () => number } = {}): LoginNonces {
  const now = options.now ?? (() => performance.now());
  const waiting = new Map<string, number>();
  const digest = (nonce: string) => createHash("sha256").update(nonce).digest("hex");
  return {
    issue() {
      const nonce = randomBytes(24).toString("base64url");
      waiting.set(digest(nonce), now());
      while (waiting.size > maxWaiting) waiting.delete(waiting.keys().next().value as string);
      return nonce;
    },
    redeem(nonce) {
      const key = digest(nonce);
      const issued = waiting.get(key);
      waiting.delete(key);
      return issued !== undefined && now() - issued <= loginLifetimeMs;
    },
  };
}
