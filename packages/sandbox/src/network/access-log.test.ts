import { describe, expect, it } from "vitest";
import { parseAccessLogLine } from "./access-log.ts";

describe("parseAccessLogLine", () => {
  it("reads an allowed tunnel, a refused request and a plain HTTP request", () => {
    expect(
      parseAccessLogLine("1700000000.123 198.18.0.3 TCP_TUNNEL 200 CONNECT 192.0.2.9 pypi.org:443"),
    ).toEqual({
      time: 1700000000123,
      client: "198.18.0.3",
      result: "TCP_TUNNEL",
      status: 200,
      method: "CONNECT",
      server: "192.0.2.9",
      url: "pypi.org:443",
      host: "pypi.org",
      decision: "allowed",
    });
    const refused = parseAccessLogLine(
      "1700000000.500 198.18.0.3 TCP_DENIED 403 GET - http://example.invalid/x",
    );
    expect(refused).toMatchObject({
      decision: "refused",
      host: "example.invalid",
      server: undefined,
      status: 403,
    });
    const literal = parseAccessLogLine(
      "1700000000.500 198.18.0.3 TCP_DENIED 403 CONNECT - [2001:db8::1]:443",
    );
    expect(literal).toMatchObject({ decision: "refused", host: "2001:db8::1" });
  });

  it("ignores anything that is not an access log line", () => {
    expect(parseAccessLogLine("2024/01/01 00:00:00| Accepting HTTP Socket connections")).toBeUndefined();
    expect(parseAccessLogLine("")).toBeUndefined();
  });
});
