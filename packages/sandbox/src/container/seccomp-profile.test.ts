import { describe, expect, it } from "vitest";
import { seccompProfile } from "./seccomp-profile.ts";

const rulesFor = (name: string) => seccompProfile.syscalls.filter((rule) => rule.names.includes(name));

describe("the sandbox's seccomp profile", () => {
  it("allows native 64-bit calls only: no i386, x32 or 32-bit Arm ABI", () => {
    expect(seccompProfile.architectures).toEqual(["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"]);
    expect(seccompProfile.defaultAction).toBe("SCMP_ACT_ERRNO");
  });

  it("refuses io_uring, and allows nothing Docker grants only with a capability", () => {
    for (const name of ["io_uring_setup", "io_uring_enter", "io_uring_register", "clone3"]) {
      expect(rulesFor(name).map((rule) => rule.action)).toEqual(["SCMP_ACT_ERRNO"]);
    }
    for (const name of ["unshare", "setns", "mount", "bpf", "perf_event_open", "keyctl", "init_module"]) {
      expect(rulesFor(name), name).toEqual([]);
    }
  });

  it("allows socket() for every family but AF_VSOCK, and clone() without namespace flags", () => {
    expect(rulesFor("socket")).toEqual([
      { names: ["socket"], action: "SCMP_ACT_ALLOW", args: [{ index: 0, value: 40, op: "SCMP_CMP_NE" }] },
    ]);
    expect(rulesFor("clone")).toEqual([
      {
        names: ["clone"],
        action: "SCMP_ACT_ALLOW",
        args: [{ index: 0, value: 0x7e020000, op: "SCMP_CMP_MASKED_EQ" }],
      },
    ]);
  });
});
