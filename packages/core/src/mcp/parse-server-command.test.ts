import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors/config-error.ts";
import { parseServerCommand } from "./parse-server-command.ts";

describe("parseServerCommand", () => {
  it("splits on whitespace", () => {
    expect(parseServerCommand("  npx -y   @modelcontextprotocol/server-everything ")).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-everything"],
    });
  });

  it("keeps quoted words together, like a shell", () => {
    expect(parseServerCommand(`node "my server.js" --name 'a "b" c' --path=/tmp/x\\ y ""`)).toEqual({
      command: "node",
      args: ["my server.js", "--name", 'a "b" c', "--path=/tmp/x y", ""],
    });
  });

  it('honours backslash escapes inside double quotes only for " \\ $ and `', () => {
    expect(parseServerCommand(String.raw`python -c "print(\"hi\\n\")" "C:\dir"`)).toEqual({
      command: "python",
      args: ["-c", 'print("hi\\n")', "C:\\dir"],
    });
  });

  it("runs nothing and expands nothing", () => {
    expect(parseServerCommand("echo $HOME ~ * $(whoami) ; rm -rf x")).toEqual({
      command: "echo",
      args: ["$HOME", "~", "*", "$(whoami)", ";", "rm", "-rf", "x"],
    });
  });

  it("turns leading NAME=value words into env", () => {
    expect(parseServerCommand("API_KEY=abc 'LABEL=two words' node server.js X=1")).toEqual({
      command: "node",
      args: ["server.js", "X=1"],
      env: { API_KEY: "abc", LABEL: "two words" },
    });
  });

  it("turns a lone http(s) URL into a Streamable HTTP spec", () => {
    expect(parseServerCommand("http://127.0.0.1:3000/mcp")).toEqual({ url: "http://127.0.0.1:3000/mcp" });
    expect(parseServerCommand("curl http://127.0.0.1:3000/mcp")).toEqual({
      command: "curl",
      args: ["http://127.0.0.1:3000/mcp"],
    });
  });

  it("refuses an unclosed quote, a trailing backslash and an empty line with a ConfigError", () => {
    for (const [line, message] of [
      [`node "server.js`, `a " quote is not closed`],
      [`node 'server.js`, "a ' quote is not closed"],
      ["node server.js \\", "lone backslash"],
      ["   ", "has no command"],
      ["A=1 B=2", "has no command"],
    ] as const) {
      let error: unknown;
      try {
        parseServerCommand(line);
      } catch (caught) {
        error = caught;
      }
      expect(ConfigError.isInstance(error), line).toBe(true);
      expect((error as Error).message).toContain(message);
    }
  });
});
