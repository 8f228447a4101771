import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { coreAssetPlaces, coreAssets } from "./core-assets.ts";

describe("@codeaction/core's asset table", () => {
  it.each(Object.keys(coreAssetPlaces) as (keyof typeof coreAssetPlaces)[])(
    "%s is where the table says, in the sources",
    (name) => {
      expect(existsSync(coreAssets.path(name))).toBe(true);
    },
  );
});
