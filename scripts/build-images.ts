// Builds (or reuses) the sandbox images and the egress proxy image. scripts/setup.sh builds the
// demo's base image; scripts/setup-tests.sh the data and proxy images the tests use.
// Usage: node scripts/build-images.ts [--flavour base|data|proxy|all]... [--force]
import { buildImage, type ImageFlavour } from "../packages/sandbox/src/images/image.ts";
import { buildProxyImage } from "../packages/sandbox/src/network/proxy-image.ts";

type Target = ImageFlavour | "proxy";
const targets: readonly Target[] = ["base", "data", "proxy"];
const args = process.argv.slice(2);
const named = args.flatMap((arg, index) => (args[index - 1] === "--flavour" ? [arg] : []));
const unknown = named.filter((name) => name !== "all" && !targets.includes(name as Target));
if (unknown.length > 0 || (args.includes("--flavour") && named.length === 0)) {
  process.stderr.write(
    `[image] unknown --flavour ${JSON.stringify(unknown[0] ?? "")}: use base, data, proxy or all\n`,
  );
  process.exit(2);
}
const flavours = named.length === 0 || named.includes("all") ? targets : (named as Target[]);
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
