import { createHash } from "node:crypto";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxAssets } from "../assets/sandbox-assets.ts";
import { defaultDocker } from "../connection/connect-docker.ts";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { statusCodeOf } from "../engine/engine-operations.ts";
import { ImageBuildError } from "../errors/image-build-error.ts";
import { DATA_IMAGE, DEFAULT_IMAGE } from "./names.ts";
import {
  buildOfflineImage,
  DEBIAN_SUITE,
  followJsonStream,
  OFFLINE_TREE_METHOD,
  offlineAvailable,
  RECIPE_LABEL,
} from "./offline-image.ts";

/**
 * The sandbox images: `codeaction/python:3.11` (standard library only) and
 * `codeaction/python:3.11-data` (adds numpy, pandas, matplotlib with the Agg backend, and
 * openpyxl for Excel files). Two build paths give the
 * same image: a Dockerfile FROM python:3.11-slim where a registry is reachable, and
 * offline a Debian root filesystem from mmdebstrap, imported with `docker import` (offline-image.ts).
 * Both run images/python/additions.sh. The recipe version (a hash of the recipe files,
 * the flavour and the offline tree method) is stored in the `codeaction.recipe` label: a changed recipe rebuilds,
 * an unchanged one is reused.
 */
export { RECIPE_LABEL };
export const BUILD_COMMAND = "codeaction image build";

/** Which sandbox image: "base" (`DEFAULT_IMAGE`, standard library only) or "data" (`DATA_IMAGE`, with numpy and pandas). */
export type ImageFlavour = "base" | "data";
export type BuildMethod = "auto" | "offline" | "dockerfile";

type Flavour = {
  name: string;
  debianPackages: string[];
  pipPackages: string[];
  /** Extra image environment (ENV of the offline path). */
  environment?: Record<string, string>;
};
const FLAVOURS: Record<ImageFlavour, Flavour> = {
  // No `environment` key: the base image needs none.
  base: { name: DEFAULT_IMAGE, debianPackages: ["python3", "python3-pip"], pipPackages: [] },
  data: {
    name: DATA_IMAGE,
    debianPackages: [
      "python3",
      "python3-pip",
      "python3-numpy",
      "python3-pandas",
      "python3-matplotlib",
      "python3-openpyxl",
      // What debootstrap's resolver added here and apt's does not (mime-support brings mailcap and
      // with it perl; lsb-base is transitional): named, so the image keeps its packages (issue 30).
      "mime-support",
      "lsb-base",
      "python3-typing-extensions",
      "python3-unicodedata2",
    ],
    pipPackages: ["numpy", "pandas", "matplotlib", "openpyxl"],
    // No display in a sandbox: draw with Agg, and keep matplotlib's config and font cache in /tmp
    // (the image's root is read-only at run time; /tmp is a writable tmpfs).
    environment: { MPLBACKEND: "Agg", MPLCONFIGDIR: "/tmp/matplotlib" },
  },
};

function environmentLine(flavour: ImageFlavour): string {
  return Object.entries(FLAVOURS[flavour].environment ?? {})
    .map(([key, value]) => ` ${key}=${value}`)
    .join("");
}

export function imageName(flavour: ImageFlavour): string {
  return FLAVOURS[flavour].name;
}

/** The recipe version of a flavour: changes whenever what goes into the image changes. */
export async function recipeVersion(flavour: ImageFlavour): Promise<string> {
  const hash = createHash("sha256");
  for (const file of ["images/python/additions.sh", "images/python/Dockerfile"] as const) {
    hash.update(await readFile(sandboxAssets.path(file)));
  }
  hash.update(JSON.stringify({ flavour: FLAVOURS[flavour], suite: DEBIAN_SUITE, tree: OFFLINE_TREE_METHOD }));
  return hash.digest("hex").slice(0, 16);
}

/** Whether an image is present and built from the current recipe (`imageState`); `version` is the recipe version it carries. */
export type ImageState = { name: string; state: "current" | "stale" | "missing"; version?: string };

/** Whether the image of a flavour is present and built from the current recipe. */
export async function imageState(docker: ContainerEngine, flavour: ImageFlavour): Promise<ImageState> {
  const name = imageName(flavour);
  const wanted = await recipeVersion(flavour);
  try {
    const info = await docker.getImage(name).inspect();
    const version = info.Config?.Labels?.[RECIPE_LABEL];
    return { name, state: version === wanted ? "current" : "stale", ...(version ? { version } : {}) };
  } catch (error) {
    if (statusCodeOf(error) === 404) return { name, state: "missing" };
    throw error;
  }
}

/** Options of `buildImage`: which flavour, which build path, and whether to rebuild a current image. */
export type BuildImageOptions = {
  /** The engine to build on (default: dockerode's defaults, DOCKER_HOST or the local socket). */
  docker?: ContainerEngine;
  flavour?: ImageFlavour;
  method?: BuildMethod;
  /** Base image for the Dockerfile path (default python:3.11-slim). */
  baseImage?: string;
  /** Image name to produce (default: the flavour's name). */
  tag?: string;
  /** Rebuild even when the current image matches the recipe. */
  force?: boolean;
  /** Debian mirror for the offline path (default $CODEACTION_DEBIAN_MIRROR or deb.debian.org). */
  mirror?: string;
  onProgress?: (line: string) => void;
};

/** What `buildImage` did: the image name, its recipe version, how it was made ("reused" when current) and how long it took. */
export type BuildImageResult = {
  name: string;
  version: string;
  method: "offline" | "dockerfile" | "reused";
  durationMs: number;
};

/**
 * Builds the sandbox image of a flavour from the recipe shipped in this package (`images/python`), or reuses it when the
 * image already carries the current recipe version. Offline (mmdebstrap) or from the Dockerfile, whichever works here.
 */
export async function buildImage(options: BuildImageOptions): Promise<BuildImageResult> {
  const started = performance.now();
  options = { ...options, docker: options.docker ?? defaultDocker() };
  const flavour = options.flavour ?? "base";
  const name = options.tag ?? imageName(flavour);
  const version = await recipeVersion(flavour);
  const progress = options.onProgress ?? (() => {});
  if (!options.force && !options.tag) {
    const state = await imageState(options.docker!, flavour);
    if (state.state === "current") {
      return { name, version, method: "reused", durationMs: performance.now() - started };
    }
    progress(
      `${name}: ${state.state === "missing" ? "not present" : "built from an older recipe"}, building`,
    );
  }
  const method = await chooseMethod(options);
  if (method === "dockerfile") {
    await buildWithDockerfile(options, flavour, name, version, progress);
  } else {
    await buildOffline(options, flavour, name, version, progress);
  }
  return { name, version, method, durationMs: performance.now() - started };
}

async function chooseMethod(options: BuildImageOptions): Promise<"offline" | "dockerfile"> {
  if (options.method === "offline" || options.method === "dockerfile") return options.method;
  const base = options.baseImage ?? "python:3.11-slim";
  if (await imageExists(options.docker!, base)) return "dockerfile";
  if (await offlineAvailable()) return "offline";
  return "dockerfile"; // the engine pulls the base; a failure says so below
}

async function imageExists(docker: ContainerEngine, name: string): Promise<boolean> {
  try {
    await docker.getImage(name).inspect();
    return true;
  } catch {
    return false;
  }
}

async function buildWithDockerfile(
  options: BuildImageOptions,
  flavour: ImageFlavour,
  name: string,
  version: string,
  progress: (line: string) => void,
): Promise<void> {
  const base = options.baseImage ?? "python:3.11-slim";
  progress(`${name}: docker build FROM ${base}`);
  const what = `docker build of ${name} FROM ${base}`;
  const context = await dockerfileContext(flavour);
  try {
    const stream = await options
      .docker!.buildImage(
        { context, src: ["Dockerfile", "additions.sh"] },
        {
          t: name,
          buildargs: { BASE: base, EXTRA_PIP: FLAVOURS[flavour].pipPackages.join(" ") },
          labels: { [RECIPE_LABEL]: version, "codeaction.flavour": flavour },
          rm: true,
          forcerm: true,
        },
      )
      .catch((error: Error) => {
        throw new ImageBuildError(`${what} failed: ${error.message}`, { cause: error });
      });
    await followJsonStream(stream, progress, what);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

/**
 * The recipe folder for `docker build`, its Dockerfile ending with the flavour's environment (the
 * same ENV the offline path gives `docker import`: MPLBACKEND and MPLCONFIGDIR for the data image).
 * A copy, so the recipe files, and with them the recipe version, stay as they are.
 */
export async function dockerfileContext(flavour: ImageFlavour): Promise<string> {
  const context = await mkdtemp(join(tmpdir(), "codeaction-recipe-"));
  const dockerfile = await readFile(sandboxAssets.path("images/python/Dockerfile"), "utf8");
  const environment = environmentLine(flavour);
  await writeFile(
    join(context, "Dockerfile"),
    environment ? `${dockerfile.trimEnd()}\nENV${environment}\n` : dockerfile,
  );
  await copyFile(sandboxAssets.path("images/python/additions.sh"), join(context, "additions.sh"));
  return context;
}

async function buildOffline(
  options: BuildImageOptions,
  flavour: ImageFlavour,
  name: string,
  version: string,
  progress: (line: string) => void,
): Promise<void> {
  await buildOfflineImage({
    ...(options.docker ? { docker: options.docker } : {}),
    ...(options.mirror ? { mirror: options.mirror } : {}),
    name,
    debianPackages: FLAVOURS[flavour].debianPackages,
    additionsScript: sandboxAssets.path("images/python/additions.sh"),
    changes: [
      `ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${environmentLine(flavour)}`,
      "WORKDIR /workspace",
      "USER 65534:65534",
      `LABEL ${RECIPE_LABEL}=${version} codeaction.flavour=${flavour}`,
      'CMD ["python3"]',
    ],
    version,
    onProgress: progress,
  });
}
