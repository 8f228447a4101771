import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { privateFolder, writePrivateFile } from "@codeaction/core/internal";
import { UsageError } from "../errors/usage-error.ts";

/** The shortest token `--token-file` may hold: anything shorter could be guessed. */
export const minimumTokenCharacters = 16;

/** A new random token: 32 bytes, base64url (43 characters). */
export function createToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The token in `path` (`--token-file`), trimmed; a UsageError when it is missing, empty or too short. */
export async function readTokenFile(path: string, command: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError({
      command,
      message: `--token-file ${JSON.stringify(path)} could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a file holding the bearer token clients send`,
    });
  }
  const token = text.trim();
  if (token.length < minimumTokenCharacters || /\s/.test(token)) {
    throw new UsageError({
      command,
      message: `--token-file ${JSON.stringify(path)} must hold one token of at least ${minimumTokenCharacters} characters without spaces (for example: openssl rand -base64 32 > ${path})`,
    });
  }
  return token;
}

/**
 * A checker of `Authorization: Bearer <token>` headers. Both sides are hashed first, so the
 * comparison is constant-time whatever the lengths (timingSafeEqual needs equal lengths).
 */
export function bearerChecker(token: string): (authorization: string | undefined) => boolean {
  const expected = createHash("sha256").update(token).digest();
  return (authorization) => {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
    const given = createHash("sha256")
      .update(match?.[1] ?? "")
      .digest();
    return timingSafeEqual(expected, given) && match !== null;
  };
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
