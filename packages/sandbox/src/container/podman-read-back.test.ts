import { describe, expect, it } from "vitest";
import { findInsideProblems } from "./podman-read-back.ts";

const status = (overrides: Record<string, string> = {}) =>
  Object.entries({
    Name: "python3",
    CapInh: "0000000000000000",
    CapPrm: "0000000000000000",
    CapEff: "0000000000000000",
    CapBnd: "0000000000000000",
    CapAmb: "0000000000000000",
    NoNewPrivs: "1",
    Seccomp: "2",
    ...overrides,
  })
    .map(([key, value]) => `${key}:\t${value}`)
    .join("\n");

describe("the read-back from inside a Podman container", () => {
  it("is clean when PID 1 has no capabilities, no-new-privileges, a filter and every path masked", () => {
    expect(findInsideProblems(status())).toEqual([]);
  });

  it("names each flag that does not hold, and each path left unmasked", () => {
    const output = `${status({ CapBnd: "00000000a80425fb", NoNewPrivs: "0", Seccomp: "0" })}\nunmasked /proc/cmdline\nunmasked /proc/kcore\n`;
    expect(findInsideProblems(output)).toEqual([
      "CapBnd of PID 1 is 00000000a80425fb, not 0",
      "NoNewPrivs of PID 1 is 0, not 1",
      "Seccomp of PID 1 is 0, not 2 (filter)",
      "/proc/cmdline, /proc/kcore not masked",
    ]);
  });

  it("treats a missing field as a problem (an output cut short proves nothing)", () => {
    expect(findInsideProblems("CapEff:\t0000000000000000\n")).toContain("CapBnd of PID 1 is missing, not 0");
  });
});
