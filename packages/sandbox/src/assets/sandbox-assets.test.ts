import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sandboxAssetPlaces, sandboxAssets } from "./sandbox-assets.ts";

describe("@codeaction/sandbox's asset table", () => {
  it.each(Object.keys(sandboxAssetPlaces) as (keyof typeof sandboxAssetPlaces)[])(
    "%s is where the table says, in the sources",
    (name) => {
      expect(existsSync(sandboxAssets.path(name))).toBe(true);
    },
  );
});
