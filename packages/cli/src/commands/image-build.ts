import {
  type BuildImageOptions,
  buildImage,
  DATA_IMAGE,
  DEFAULT_IMAGE,
  type ImageFlavour,
} from "@codeaction/sandbox";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { createBuildProgress } from "../terminal/build-progress.ts";
import { createProgress, type Progress } from "../terminal/progress.ts";

export const imageBuildHelp = `Usage: codeaction image build [--data | --all] [--force] [--quiet]

Builds the sandbox image: ${DEFAULT_IMAGE} (Python's standard library), or with --data
${DATA_IMAGE} (adds numpy, pandas, matplotlib and openpyxl). Offline when no registry
is reachable (Debian's mmdebstrap, as root on Linux), else a Dockerfile FROM python:3.11-slim. An
image built from the current recipe is reused unless --force.

On a terminal one line follows the build (step 6 of 12, what runs); elsewhere one line says that
a build started. When a build fails, the end of its log is printed with the error. Only the outcome
goes to stdout.

Options:
  --data              build the data image instead of the base image
  --all               build both
  --force             rebuild even when the image is current
  --base-image IMAGE  build with the Dockerfile FROM this image (default python:3.11-slim)
  --tag NAME          build under this name instead (always builds; use it with --image)
  --quiet             no progress on stderr (a failed build still prints its log)
  --debug             show stack traces
  -h, --help          show this help`;

export async function imageBuildCommand(args: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments("image build", args, {
    data: { type: "boolean" },
    all: { type: "boolean" },
    force: { type: "boolean" },
    "base-image": { type: "string" },
    tag: { type: "string" },
    quiet: { type: "boolean" },
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
  if (values.tag !== undefined && values.all) {
    throw new UsageError({
      command: "image build",
      message: "--tag names one image: use it with --data or alone, not with --all",
    });
  }
  const flavours: ImageFlavour[] = values.all ? ["base", "data"] : values.data ? ["data"] : ["base"];
  const progress = createProgress({ stream: context.stderr, quiet: values.quiet === true });
  for (const flavour of flavours) {
    await buildOne(context, progress, {
      flavour,
      force: values.force === true,
      // A base given is a Dockerfile build FROM it.
      ...(values["base-image"] !== undefined
        ? { baseImage: values["base-image"], method: "dockerfile" as const }
        : {}),
      ...(values.tag !== undefined ? { tag: values.tag } : {}),
    });
  }
  return 0;
}

async function buildOne(
  context: CliContext,
  progress: Progress,
  options: Pick<BuildImageOptions, "flavour" | "force" | "baseImage" | "method" | "tag">,
): Promise<void> {
  const image = options.tag ?? (options.flavour === "data" ? DATA_IMAGE : DEFAULT_IMAGE);
  const build = createBuildProgress({ progress, image });
  progress.count(`checking ${image}`);
  try {
    const result = await buildImage({ ...options, onProgress: (line) => build.line(line) });
    progress.stop();
    const seconds = (result.durationMs / 1000).toFixed(1);
    context.stdout.write(
      result.method === "reused"
        ? `${result.name} is current (recipe ${result.version}); nothing to build (--force rebuilds)\n`
        : `${result.name} built (${result.method}, recipe ${result.version}) in ${seconds}s\n`,
    );
  } catch (error) {
    progress.stop();
    const log = build.log();
    if (log) context.stderr.write(`${log}\n`);
    throw error;
  } finally {
    progress.stop();
  }
}
