import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { open, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { privateFolder, writePrivateFile } from "@codeaction/core/durable";
import { UsageError } from "../errors/usage-error.ts";

/** The shortest token `--token-file` may hold: anything shorter could be guessed. */
export const minimumTokenCharacters = 16;

/** A new random token: 32 bytes, base64url (43 characters). */
export function createToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The least estimated strength of a `--token-file` token, in bits (see tokenStrengthBits). */
export const minimumTokenBits = 64;

/**
 * A token's strength as estimated from its text: its length times log2 of the number of distinct
 * characters in it. 16 identical characters are 0 bits; a 43-character base64url random token is
 * about 200; 32 random hex digits about 125. An estimate from above for patterned text
 * ("abcdefghijklmnop" counts 64), and from below for short random ones.
 */
export function tokenStrengthBits(token: string): number {
  const distinct = new Set(token).size;
  return distinct <= 1 ? 0 : token.length * Math.log2(distinct);
}

/**
 * The token in `path` (`--token-file`), trimmed. A UsageError, naming the cause and the fix, when the
 * file cannot be read, can be read by other users (mode & 0o077), or holds no token of at least
 * `minimumTokenCharacters` characters without spaces and `minimumTokenBits` estimated bits.
 */
export async function readTokenFile(path: string, command: string): Promise<string> {
  const make = `openssl rand -base64 32 > ${path} && chmod 600 ${path}`;
  let text: string;
  try {
    const file = await open(path, "r");
    try {
      const { mode } = await file.stat();
      if ((mode & 0o077) !== 0) {
        throw new UsageError({
          command,
          message: `--token-file ${JSON.stringify(path)} can be read or written by other users (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): whoever reads it can use the server. Make it yours only: chmod 600 ${path}`,
        });
      }
      text = await file.readFile("utf8");
    } finally {
      await file.close();
    }
  } catch (error) {
    if (UsageError.isInstance(error)) throw error;
    throw new UsageError({
      command,
      message: `--token-file ${JSON.stringify(path)} could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a file holding the bearer token clients send`,
    });
  }
  const token = text.trim();
  if (token.length < minimumTokenCharacters || /\s/.test(token)) {
    throw new UsageError({
      command,
      message: `--token-file ${JSON.stringify(path)} must hold one token of at least ${minimumTokenCharacters} characters without spaces (for example: ${make})`,
    });
  }
  const bits = tokenStrengthBits(token);
  if (bits < minimumTokenBits) {
    throw new UsageError({
      command,
      message: `--token-file ${JSON.stringify(path)} holds a token too easy to guess: ${token.length} characters of ${new Set(token).size} different kinds, about ${Math.floor(bits)} bits (its length times log2 of its distinct characters), under the ${minimumTokenBits} required. Use a random token: ${make}`,
    });
  }
  return token;
}

/**
 * A checker of `Authorization: Bearer <token>` headers. Both sides are hashed first, so the
 * comparison is constant-time whatever the lengths (timingSafeEqual needs equal lengths).
 */
export function bearerChecker(token: string): (authorization: string | undefined) => boolean {
  const matches = secretMatcher(token);
  return (authorization) => {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
    return matches(match?.[1] ?? "") && match !== null;
  };
}

/** A constant-time comparison with `secret`: both sides hashed, so lengths tell nothing either. */
export function secretMatcher(secret: string): (given: string) => boolean {
  const expected = createHash("sha256").update(secret).digest();
  return (given) => timingSafeEqual(expected, createHash("sha256").update(given).digest());
}

/** The folder holding generated tokens: ~/.codeaction/mcp, mode 0700. */
export function tokenFolder(): string {
  return join(homedir(), ".codeaction", "mcp");
}

const tokenHint = "remove it, or give your own token with --token-file";

/**
 * Writes `token` to `<folder>/http-<port>.token`, created 0600 in folders made (or set back to) 0700;
 * a symbolic link in its place is refused, never followed. Returns the file's path.
 */
export async function writeTokenFile(token: string, port: number, folder = tokenFolder()): Promise<string> {
  await privateFolder(join(folder, ".."), tokenHint);
  await privateFolder(folder, tokenHint);
  const path = join(folder, `http-${port}.token`);
  await writePrivateFile(path, `${token}\n`, { hint: tokenHint });
  return path;
}

/** Removes a token file written by writeTokenFile (the server is stopping). */
export async function removeTokenFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
