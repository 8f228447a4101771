import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearerChecker,
  createToken,
  readTokenFile,
  tokenStrengthBits,
  writeTokenFile,
} from "./http-token.ts";

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-token-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("the HTTP server's bearer token", () => {
  it("accepts exactly `Bearer <token>`", () => {
    const token = createToken();
    const matches = bearerChecker(token);
    expect(matches(`Bearer ${token}`)).toBe(true);
    expect(matches(`bearer ${token}`)).toBe(true);
    for (const header of [
      undefined,
      "",
      token,
      `Bearer ${token}x`,
      `Bearer ${token.slice(1)}`,
      "Bearer ",
      `Basic ${token}`,
    ]) {
      expect(matches(header), String(header)).toBe(false);
    }
    expect(createToken()).not.toBe(token);
  });

  it("writes a 0600 file in 0700 folders, and refuses a link in the file's place", async () => {
    const tokens = join(folder, "home", ".codeaction", "mcp");
    await mkdir(join(folder, "home", ".codeaction"), { recursive: true, mode: 0o755 });
    const path = await writeTokenFile("the-token-text-here", 8765, tokens);
    expect(path).toBe(join(tokens, "http-8765.token"));
    expect(await readFile(path, "utf8")).toBe("the-token-text-here\n");
    expect((await lstat(path)).mode & 0o777).toBe(0o600);
    expect((await lstat(tokens)).mode & 0o777).toBe(0o700);
    expect((await lstat(join(tokens, ".."))).mode & 0o777).toBe(0o700);

    const target = join(folder, "elsewhere.txt");
    await writeFile(target, "untouched");
    await symlink(target, join(tokens, "http-8766.token"));
    await expect(writeTokenFile("the-token-text-here", 8766, tokens)).rejects.toThrow(
      /http-8766\.token is a symbolic link, .*--token-file/,
    );
    expect(await readFile(target, "utf8")).toBe("untouched");
  });

  it("reads --token-file, refusing a short one with how to make one", async () => {
    const good = join(folder, "good.token");
    await writeFile(good, "  0123456789abcdef0123\n", { mode: 0o600 });
    expect(await readTokenFile(good, "mcp")).toBe("0123456789abcdef0123");
    const short = join(folder, "short.token");
    await writeFile(short, "secret\n", { mode: 0o600 });
    await expect(readTokenFile(short, "mcp")).rejects.toThrow(
      /must hold one token of at least 16 characters without spaces \(for example: openssl rand -base64 32 >/,
    );
  });

  it("refuses a token file other users can read, naming its mode and the chmod", async () => {
    const open = join(folder, "open.token");
    await writeFile(open, `${createToken()}\n`, { mode: 0o600 });
    await chmod(open, 0o644);
    await expect(readTokenFile(open, "mcp")).rejects.toThrow(
      /can be read or written by other users \(mode 0644\).*chmod 600 .*open\.token/,
    );
    await chmod(open, 0o600);
    expect(await readTokenFile(open, "mcp")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("refuses a token with too little entropy: 16 identical characters, two kinds; accepts random ones", async () => {
    for (const [token, bits] of [
      ["a".repeat(16), 0],
      ["abababababababab", 16],
      ["aaaaaaaabbbbbbbbcccc", 31],
    ] as const) {
      expect(Math.floor(tokenStrengthBits(token))).toBe(bits);
      const path = join(folder, "weak.token");
      await writeFile(path, `${token}\n`, { mode: 0o600 });
      await expect(readTokenFile(path, "mcp")).rejects.toThrow(
        new RegExp(
          `too easy to guess: ${token.length} characters of .* about ${bits} bits .* under the 64 required. Use a random token: openssl rand -base64 32`,
        ),
      );
    }
    for (const token of [createToken(), randomBytes(16).toString("hex")]) {
      expect(tokenStrengthBits(token)).toBeGreaterThanOrEqual(64);
    }
  });
});
