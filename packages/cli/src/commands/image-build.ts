import { buildImage, type ImageFlavour } from "@codeaction/sandbox";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { createProgress } from "../terminal/progress.ts";

export const imageBuildHelp = `Usage: codeaction image build [--data | --all] [--force]

Builds the sandbox image: codeaction/python:3.11 (Python's standard library), or with --data
codeaction/python:3.11-data (adds numpy and pandas). Offline when no registry is reachable (Debian's
debootstrap, as root on Linux), else a Dockerfile FROM python:3.11-slim. An image built from the
current recipe is reused unless --force.

Options:
  --data     build the data image (numpy, pandas) instead of the base image
  --all      build both
  --force    rebuild even when the image is current
  --debug    show stack traces
  -h, --help show this help`;

export async function imageBuildCommand(args: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments("image build", args, {
    data: { type: "boolean" },
    all: { type: "boolean" },
    force: { type: "boolean" },
  });
  if (values.help) {
    context.stdout.write(`${imageBuildHelp}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError({
      command: "image build",
      message: `unexpected argument ${JSON.stringify(positionals[0])}`,
    });
  }
  if (values.data && values.all) {
    throw new UsageError({ command: "image build", message: "--data and --all cannot be combined" });
  }
  const flavours: ImageFlavour[] = values.all ? ["base", "data"] : values.data ? ["data"] : ["base"];
  const progress = createProgress({ stream: context.stderr });
  for (const flavour of flavours) {
    progress.update(`building the ${flavour} image`);
    try {
      const result = await buildImage({
        flavour,
        force: values.force === true,
        onProgress: (line) => progress.update(line.split("\n").at(-1) ?? line),
      });
      progress.stop();
      const seconds = (result.durationMs / 1000).toFixed(1);
      context.stdout.write(
        result.method === "reused"
          ? `${result.name} is current (recipe ${result.version}); nothing to build (--force rebuilds)\n`
          : `${result.name} built (${result.method}, recipe ${result.version}) in ${seconds}s\n`,
      );
    } finally {
      progress.stop();
    }
  }
  return 0;
}
