import type Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { requireImageCommands } from "./image-commands.ts";

// Which images need a look inside. The look itself (a created, never-started container read with
// HEAD /archive) is proven against the real engine: an image without python3 is refused in
// packages/core/test/agent-langchain.docker.test.ts. Here only the decision is checked: a stand-in
// engine records whether a container would have been created.

function recordingEngine(): { docker: Dockerode; created: string[] } {
  const created: string[] = [];
  const docker = {
    createContainer: async (options: { Image: string }) => {
      created.push(options.Image);
      throw new Error("stop here: the look inside is the docker tests' subject");
    },
  } as unknown as Dockerode;
  return { docker, created };
}

const common = { env: [], labels: {}, commands: ["python3"] };

describe("requireImageCommands", () => {
  it("takes our own Python images' word for python3 (flavour base or data): no container", async () => {
    for (const flavour of ["base", "data"]) {
      const { docker, created } = recordingEngine();
      await requireImageCommands(docker, {
        ...common,
        image: `codeaction/python:${flavour}`,
        imageLabels: { "codeaction.recipe": "0123456789abcdef", "codeaction.flavour": flavour },
      });
      expect(created).toEqual([]);
    }
  });

  it("looks inside any other image, ours without that flavour (the proxy) included", async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { "codeaction.recipe": "0123456789abcdef" },
      { "codeaction.flavour": "other" },
    ];
    for (const imageLabels of cases) {
      const { docker, created } = recordingEngine();
      await expect(
        requireImageCommands(docker, { ...common, image: "some/image", imageLabels }),
      ).rejects.toThrow(/stop here/);
      expect(created).toEqual(["some/image"]);
    }
  });

  it("still looks for a command the flavour does not vouch for", async () => {
    const { docker, created } = recordingEngine();
    await expect(
      requireImageCommands(docker, {
        ...common,
        commands: ["python3", "Rscript"],
        image: "codeaction/python:3.11",
        imageLabels: { "codeaction.flavour": "base" },
      }),
    ).rejects.toThrow(/stop here/);
    expect(created).toEqual(["codeaction/python:3.11"]);
  });
});
