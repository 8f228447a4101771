import Dockerode from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { buildImage, imageState, RECIPE_LABEL, recipeVersion } from "./image.ts";
import { DEFAULT_IMAGE } from "./names.ts";

const docker = new Dockerode();
const STAND_IN = "codeaction-test/python-standin:3.11";
const FROM_DOCKERFILE = "codeaction-test/python-dockerfile:3.11";
const DATA_STAND_IN = "codeaction-test/python-data-standin:3.11";
const DATA_FROM_DOCKERFILE = "codeaction-test/python-data-dockerfile:3.11";

async function runIn(image: string, command: string[]): Promise<string> {
  const container = await docker.createContainer({
    Image: image,
    Cmd: command,
    Labels: { "codeaction.test": "image" },
    // /tmp as in the sandbox: matplotlib keeps its config and font cache there.
    HostConfig: {
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      Tmpfs: { "/tmp": "rw,size=64m" },
    },
  });
  try {
    await container.start();
    await container.wait();
    const logs = await container.logs({ stdout: true, stderr: true });
    // Without a TTY the log is multiplexed: 8-byte frame headers, then the payload.
    const parts: Buffer[] = [];
    for (let offset = 0; offset + 8 <= logs.length; ) {
      const size = logs.readUInt32BE(offset + 4);
      parts.push(logs.subarray(offset + 8, offset + 8 + size));
      offset += 8 + size;
    }
    return Buffer.concat(parts).toString("utf8");
  } finally {
    await container.remove({ force: true });
  }
}

afterAll(async () => {
  for (const name of [FROM_DOCKERFILE, STAND_IN, DATA_FROM_DOCKERFILE, DATA_STAND_IN]) {
    await docker
      .getImage(name)
      .remove({ force: true })
      .catch(() => {});
  }
});

describe("sandbox images", () => {
  it("the default image is current, and building it again reuses it", async () => {
    expect((await imageState(docker, "base")).state).toBe("current");
    const result = await buildImage({ docker, flavour: "base" });
    expect(result.method).toBe("reused");
    const info = await docker.getImage(DEFAULT_IMAGE).inspect();
    expect(info.Config.Labels?.[RECIPE_LABEL]).toBe(await recipeVersion("base"));
    expect(info.Config.User).toBe("65534:65534");
    expect(info.Config.Volumes ?? {}).toEqual({});
  });

  it("the offline tree has debootstrap's package set (usr-is-merged, no perl) and dpkg without the build's options", async () => {
    // dpkg-query -W: "package<TAB>version" per installed package.
    const output = await runIn(DEFAULT_IMAGE, ["sh", "-c", "dpkg-query -W; ls /etc/dpkg/dpkg.cfg.d/"]);
    const lines = output.split("\n").map((line) => line.split("\t")[0]);
    expect(lines).toContain("usr-is-merged");
    expect(lines).toContain("python3-pip");
    expect(lines).not.toContain("usrmerge");
    expect(lines).not.toContain("perl");
    expect(lines).not.toContain("99mmdebstrap");
  });

  it("the data flavour has numpy, pandas, openpyxl and matplotlib drawing with Agg", async () => {
    expect((await imageState(docker, "data")).state).toBe("current");
    const output = await runIn("codeaction/python:3.11-data", [
      "python3",
      "-c",
      "import numpy, pandas, openpyxl, matplotlib.pyplot as plot; print('pandas', pandas.__version__); print('backend', plot.get_backend())",
    ]);
    expect(output).toMatch(/^pandas \d/m);
    expect(output).toMatch(/^backend agg$/m);
  });

  it("the Dockerfile path gives the same image from a locally tagged base (no pull)", async () => {
    await docker.getImage(DEFAULT_IMAGE).tag({ repo: "codeaction-test/python-standin", tag: "3.11" });
    const lines: string[] = [];
    const result = await buildImage({
      docker,
      method: "dockerfile",
      baseImage: STAND_IN,
      tag: FROM_DOCKERFILE,
      onProgress: (line) => lines.push(line),
    });
    expect(result.method).toBe("dockerfile");
    const info = await docker.getImage(FROM_DOCKERFILE).inspect();
    expect(info.Config.Labels?.[RECIPE_LABEL]).toBe(await recipeVersion("base"));
    expect(info.Config.User).toBe("65534:65534");
    const output = await runIn(FROM_DOCKERFILE, ["sh", "-c", "id -u; python3 -c 'print(6*7)'"]);
    expect(output.split("\n").slice(0, 2)).toEqual(["65534", "42"]);
  });

  it("the Dockerfile path sets the data image's MPLBACKEND and MPLCONFIGDIR, as the offline path does", async () => {
    // A base with the data packages but neither variable set (pip then finds every package present,
    // so no registry is needed): the build itself must set them.
    const container = await docker.createContainer({
      Image: "codeaction/python:3.11-data",
      Cmd: ["true"],
      Labels: { "codeaction.test": "image" },
    });
    try {
      await container.commit({
        repo: "codeaction-test/python-data-standin",
        tag: "3.11",
        changes: ["ENV MPLBACKEND= MPLCONFIGDIR="],
      });
    } finally {
      await container.remove({ force: true });
    }
    const cleared = await runIn(DATA_STAND_IN, ["sh", "-c", 'echo "[$MPLBACKEND][$MPLCONFIGDIR]"']);
    expect(cleared.trim()).toBe("[][]");
    const result = await buildImage({
      docker,
      flavour: "data",
      method: "dockerfile",
      baseImage: DATA_STAND_IN,
      tag: DATA_FROM_DOCKERFILE,
    });
    expect(result.method).toBe("dockerfile");
    const output = await runIn(DATA_FROM_DOCKERFILE, [
      "python3",
      "-c",
      "import os, matplotlib; print(os.environ['MPLBACKEND'], os.environ['MPLCONFIGDIR'], matplotlib.get_backend())",
    ]);
    expect(output.trim()).toBe("Agg /tmp/matplotlib agg");
  }, 600_000);

  it("a Dockerfile build that cannot get its base fails with the engine's reason", async () => {
    await expect(
      buildImage({
        docker,
        method: "dockerfile",
        baseImage: "codeaction-test/absent-base:0",
        tag: FROM_DOCKERFILE,
      }),
    ).rejects.toThrow(/docker build of .* FROM codeaction-test\/absent-base:0 failed/);
  });
});
