import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { sandboxAssets } from "../assets/sandbox-assets.ts";
import { defaultDocker } from "../connection/connect-docker.ts";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { statusCodeOf } from "../engine/engine-operations.ts";
import {
  buildOfflineImage,
  DEBIAN_SUITE,
  OFFLINE_TREE_METHOD,
  RECIPE_LABEL,
} from "../images/offline-image.ts";

/**
 * The egress proxy image `codeaction/proxy:squid`: Debian bookworm minbase with Debian's squid,
 * built offline like the sandbox images (mmdebstrap, images/proxy/additions.sh, `docker import`).
 * Its recipe version (a hash of the recipe) is stored in the `codeaction.recipe` label.
 */
export const proxyImage = "codeaction/proxy:squid";
/** The proxy runs as Debian's "proxy" user, never as root. */
export const proxyUser = "13:13";
/** The port squid listens on inside the proxy container (unprivileged). */
export const proxyPort = 3128;

// lsb-base (transitional): what debootstrap's resolver added and apt's does not, so the image keeps its packages.
const debianPackages = ["squid", "lsb-base"];

export async function proxyRecipeVersion(): Promise<string> {
  const hash = createHash("sha256");
  hash.update(await readFile(sandboxAssets.path("images/proxy/additions.sh")));
  hash.update(
    JSON.stringify({ debianPackages, suite: DEBIAN_SUITE, user: proxyUser, tree: OFFLINE_TREE_METHOD }),
  );
  return hash.digest("hex").slice(0, 16);
}

/** Whether the proxy image is present and built from the current recipe. */
export async function proxyImageState(docker: ContainerEngine): Promise<"current" | "stale" | "missing"> {
  const wanted = await proxyRecipeVersion();
  try {
    const info = await docker.getImage(proxyImage).inspect();
    return info.Config?.Labels?.[RECIPE_LABEL] === wanted ? "current" : "stale";
  } catch (error) {
    if (statusCodeOf(error) === 404) return "missing";
    throw error;
  }
}

/** What `buildProxyImage` did: the image name, its recipe version, how it was made and how long it took. */
export type BuildProxyImageResult = {
  name: string;
  version: string;
  method: "offline" | "reused";
  durationMs: number;
};

/** Builds the proxy image unless the present one matches the recipe (or `force`, or `tag`). */
export async function buildProxyImage(
  options: {
    docker?: ContainerEngine;
    force?: boolean;
    /** Image name to produce instead of `proxyImage` (always builds). */
    tag?: string;
    mirror?: string;
    onProgress?: (line: string) => void;
  } = {},
): Promise<BuildProxyImageResult> {
  const started = performance.now();
  const docker = options.docker ?? defaultDocker();
  const version = await proxyRecipeVersion();
  const name = options.tag ?? proxyImage;
  if (!options.force && !options.tag && (await proxyImageState(docker)) === "current") {
    return { name, version, method: "reused", durationMs: performance.now() - started };
  }
  await buildOfflineImage({
    docker,
    name,
    debianPackages,
    additionsScript: sandboxAssets.path("images/proxy/additions.sh"),
    changes: [
      "ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      `USER ${proxyUser}`,
      `LABEL ${RECIPE_LABEL}=${version} codeaction.flavour=proxy`,
    ],
    version,
    ...(options.mirror ? { mirror: options.mirror } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  return { name, version, method: "offline", durationMs: performance.now() - started };
}
