// Builds (or reuses) the sandbox images; called by scripts/setup.sh.
// Usage: node scripts/build-images.ts [--flavour base|data|all] [--force]
import { buildImage, type ImageFlavour } from "../packages/sandbox/src/image.ts";

const args = process.argv.slice(2);
const flavourArg = args.includes("--flavour") ? args[args.indexOf("--flavour") + 1] : "all";
const flavours: ImageFlavour[] = flavourArg === "all" ? ["base", "data"] : [flavourArg as ImageFlavour];
for (const flavour of flavours) {
  const result = await buildImage({
    flavour,
    force: args.includes("--force"),
    onProgress: (line) => process.stderr.write(`[image] ${line.split("\n").at(-1)}\n`),
  });
  const seconds = (result.durationMs / 1000).toFixed(1);
  process.stderr.write(
    `[image] ${result.name} ${result.method === "reused" ? "is current" : `built (${result.method}, ${seconds} s)`} (recipe ${result.version})\n`,
  );
}
