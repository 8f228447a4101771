// Builds (or reuses) the sandbox images and the egress proxy image; called by scripts/setup.sh.
// Usage: node scripts/build-images.ts [--flavour base|data|proxy|all] [--force]
import { buildImage, type ImageFlavour } from "../packages/sandbox/src/image.ts";
import { buildProxyImage } from "../packages/sandbox/src/network/proxy-image.ts";

const args = process.argv.slice(2);
const flavourArg = args.includes("--flavour") ? args[args.indexOf("--flavour") + 1] : "all";
const flavours: (ImageFlavour | "proxy")[] =
  flavourArg === "all" ? ["base", "data", "proxy"] : [flavourArg as ImageFlavour | "proxy"];
const onProgress = (line: string) => process.stderr.write(`[image] ${line.split("\n").at(-1)}\n`);
for (const flavour of flavours) {
  const force = args.includes("--force");
  const result =
    flavour === "proxy"
      ? await buildProxyImage({ force, onProgress })
      : await buildImage({ flavour, force, onProgress });
  const seconds = (result.durationMs / 1000).toFixed(1);
  process.stderr.write(
    `[image] ${result.name} ${result.method === "reused" ? "is current" : `built (${result.method}, ${seconds} s)`} (recipe ${result.version})\n`,
  );
}
