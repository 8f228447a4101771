import { describe, expect, it } from "vitest";
import { redactSecrets, redactUrls } from "./redact.ts";

describe("redactSecrets", () => {
  it("replaces environment assignments and keeps the command", () => {
    expect(redactSecrets("GITHUB_TOKEN=ghp_abc123 npx -y @modelcontextprotocol/server-github")).toBe(
      "GITHUB_TOKEN=[redacted] npx -y @modelcontextprotocol/server-github",
    );
    expect(redactSecrets("env A=1 B='two words' node server.js")).toBe(
      "env A=[redacted] B=[redacted] node server.js",
    );
  });

  it("replaces options named like a secret, and bearer credentials", () => {
    expect(redactSecrets("node s.js --api-key sk-123 --token=abc --port 3")).toBe(
      "node s.js --api-key [redacted] --token=[redacted] --port 3",
    );
    expect(redactSecrets("Authorization: Bearer abcdefghijkl")).toBe("Authorization: Bearer [redacted]");
  });

  it("keeps an ordinary command line as it is", () => {
    const line = "node examples/servers/files.js --root ./data -v";
    expect(redactSecrets(line)).toBe(line);
  });
});

describe("redactUrls", () => {
  it("replaces credentials, query strings and fragments, keeping scheme, host and path", () => {
    expect(redactUrls("https://user:pa55@api.example.invalid:8443/v1?key=sk-1&x=2#frag")).toBe(
      "https://[redacted]@api.example.invalid:8443/v1?[redacted]",
    );
    expect(redactUrls("connect to http://192.0.2.1/mcp?token=t now")).toBe(
      "connect to http://192.0.2.1/mcp?[redacted] now",
    );
    expect(redactUrls("http://127.0.0.1:8080/v1")).toBe("http://127.0.0.1:8080/v1");
  });
});
