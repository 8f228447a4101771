import type { ContainerEngine, EngineContainer } from "../engine/container-engine.ts";
import { removeContainer, statusCodeOf } from "../engine/engine-operations.ts";
import { SandboxError } from "../errors/sandbox-error.ts";

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * What the images built from our own Python recipes (`codeaction image build`, labelled
 * `codeaction.flavour` base or data) are known to hold: no container is needed to look for it.
 * A label is only a hint here: an image that lies about it fails at its first run instead.
 */
const knownByFlavour: Record<string, readonly string[]> = { base: ["python3"], data: ["python3"] };

/**
 * Refuses an image that lacks one of `commands` on its PATH, naming the image, what is missing and
 * the fix. Nothing of the image runs: the files are read from a container that is created, never
 * started, and removed (not needed for what our own images are known to hold).
 */
export async function requireImageCommands(
  docker: ContainerEngine,
  options: {
    image: string;
    env: string[];
    commands: string[];
    labels: Record<string, string>;
    /** The image's own labels (from its inspect). */
    imageLabels?: Record<string, string>;
  },
): Promise<void> {
  const known = knownByFlavour[options.imageLabels?.["codeaction.flavour"] ?? ""] ?? [];
  const commands = options.commands.filter((command) => !known.includes(command));
  if (commands.length === 0) return;
  const path = options.env.find((entry) => entry.startsWith("PATH="))?.slice("PATH=".length) || defaultPath;
  const folders = path.split(":").filter((folder) => folder.startsWith("/"));
  const container = await docker.createContainer({
    Image: options.image,
    Entrypoint: ["/codeaction-never-started"],
    Cmd: [],
    Labels: options.labels,
    NetworkDisabled: true,
    HostConfig: { NetworkMode: "none" },
  });
  try {
    const missing: string[] = [];
    for (const command of commands) {
      if (!(await findCommand(container, folders, command))) missing.push(command);
    }
    if (missing.length === 0) return;
    throw new SandboxError(
      `The sandbox image "${options.image}" has no ${missing.join(" or ")} on its PATH (${folders.join(":")}), which the agent needs to run programs. Use an image with Python 3 as python3 (codeaction/python:3.11, or build one FROM it: docs/images.md), or install it in yours.`,
      { code: "image-unsuitable" },
    );
  } finally {
    await removeContainer(container);
  }
}

async function findCommand(container: EngineContainer, folders: string[], command: string): Promise<boolean> {
  for (const folder of folders) {
    try {
      // A HEAD answer is a stream: left unread, its socket would keep the process alive.
      const answer = (await container.infoArchive({ path: `${folder}/${command}` })) as {
        destroy?: () => void;
      };
      answer.destroy?.();
      return true;
    } catch (error) {
      if (statusCodeOf(error) !== 404) throw error;
    }
  }
  return false;
}
