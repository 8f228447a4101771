import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cliAssetPlaces, cliAssets } from "./cli-assets.ts";

describe("@codeaction/cli's asset table", () => {
  it.each(Object.keys(cliAssetPlaces) as (keyof typeof cliAssetPlaces)[])(
    "%s is where the table says, in the sources",
    (name) => {
      expect(existsSync(cliAssets.path(name))).toBe(true);
    },
  );
});
