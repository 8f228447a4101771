import { describe, expect, it } from "vitest";
import { deskHelp, deskOptions } from "./desk-command.ts";

describe("codeaction desk --help", () => {
  it("names every option the desk accepts", () => {
    const options = Object.keys(deskOptions).filter((name) => name !== "help");
    expect(options).toContain("retries");
    expect(options).toContain("server");
    expect(options.filter((name) => !deskHelp.includes(`--${name}`))).toEqual([]);
  });
});
