import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { layerBreaks } from "./check-cycles.ts";

const base = "/repo";
const at = (path: string) => join(base, path);
const graphOf = (edges: Record<string, string[]>) =>
  new Map(Object.entries(edges).map(([file, imports]) => [at(file), imports.map(at)]));

describe("the layers of the import check", () => {
  test("durable may import durable, errors and private-file, and nothing of the bridge or the turn", () => {
    const graph = graphOf({
      "packages/core/src/durable/run-state.ts": [
        "packages/core/src/durable/canonical-json.ts",
        "packages/core/src/errors/resume-state-error.ts",
        "packages/core/src/private-file.ts",
      ],
      "packages/core/src/durable/call-gate.ts": [
        "packages/core/src/bridge/tool-calls.ts",
        "packages/core/src/turn/resume-turn.ts",
      ],
      "packages/core/src/bridge/call-gate.ts": ["packages/core/src/durable/call-log.ts"],
    });
    expect(layerBreaks(graph, base)).toEqual([
      "packages/core/src/durable/call-gate.ts -> packages/core/src/bridge/tool-calls.ts",
      "packages/core/src/durable/call-gate.ts -> packages/core/src/turn/resume-turn.ts",
    ]);
  });

  test("the sandbox's engine seam imports nothing above it", () => {
    const graph = graphOf({
      "packages/sandbox/src/engine/engine-operations.ts": [
        "packages/sandbox/src/engine/container-engine.ts",
        "packages/sandbox/src/container/labels.ts",
      ],
    });
    expect(layerBreaks(graph, base)).toEqual([
      "packages/sandbox/src/engine/engine-operations.ts -> packages/sandbox/src/container/labels.ts",
    ]);
  });

  test("a folder whose name only begins like a layer's is not in it", () => {
    const graph = graphOf({ "packages/core/src/durable-extra/x.ts": ["packages/core/src/turn/turn.ts"] });
    expect(layerBreaks(graph, base)).toEqual([]);
  });
});
