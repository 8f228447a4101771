import { describe, expect, it } from "vitest";
import { randomSubnet, subnetAt, subnetPoolCidr } from "./subnet-pool.ts";

describe("subnet pool", () => {
  it("cuts 198.18.0.0/15 into /28s with the proxy at .2 and the sandbox at .3", () => {
    expect(subnetPoolCidr()).toBe("198.18.0.0/15");
    expect(subnetAt(0)).toEqual({
      subnet: "198.18.0.0/28",
      gateway: "198.18.0.1",
      proxyAddress: "198.18.0.2",
      sandboxAddress: "198.18.0.3",
    });
    expect(subnetAt(8191).subnet).toBe("198.19.255.240/28");
    expect(() => subnetAt(8192)).toThrow(RangeError);
    expect(randomSubnet().subnet).toMatch(/^198\.1[89]\.\d+\.\d+\/28$/);
  });
});
