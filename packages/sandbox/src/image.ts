import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { access, copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { sandboxAssets } from "./assets/sandbox-assets.ts";
import { defaultDocker } from "./docker-connection.ts";
import { statusCodeOf } from "./docker-operations.ts";
import type { ContainerEngine } from "./engine/container-engine.ts";
import { ImageBuildError } from "./errors/image-build-error.ts";
import { DATA_IMAGE, DEFAULT_IMAGE } from "./images/names.ts";

/**
 * The sandbox images: `codeaction/python:3.11` (standard library only) and
 * `codeaction/python:3.11-data` (adds numpy, pandas, matplotlib with the Agg backend, and
 * openpyxl for Excel files). Two build paths give the
 * same image: a Dockerfile FROM python:3.11-slim where a registry is reachable, and
 * offline a Debian root filesystem from debootstrap, imported with `docker import`.
 * Both run images/python/additions.sh. The recipe version (a hash of the recipe files
 * and the flavour) is stored in the `codeaction.recipe` label: a changed recipe rebuilds,
 * an unchanged one is reused.
 */
export const RECIPE_LABEL = "codeaction.recipe";
export const BUILD_COMMAND = "codeaction image build";

/** Which sandbox image: "base" (`DEFAULT_IMAGE`, standard library only) or "data" (`DATA_IMAGE`, with numpy and pandas). */
export type ImageFlavour = "base" | "data";
export type BuildMethod = "auto" | "offline" | "dockerfile";

const DEBIAN_SUITE = "bookworm";
type Flavour = {
  name: string;
  debianPackages: string[];
  pipPackages: string[];
  /** Extra image environment (ENV of the offline path). */
  environment?: Record<string, string>;
};
const FLAVOURS: Record<ImageFlavour, Flavour> = {
  // No `environment` key: the recipe hash of the base image stays as it was.
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
  hash.update(JSON.stringify({ flavour: FLAVOURS[flavour], suite: DEBIAN_SUITE }));
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
 * image already carries the current recipe version. Offline (debootstrap) or from the Dockerfile, whichever works here.
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

async function offlineAvailable(): Promise<boolean> {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  for (const directory of (process.env.PATH ?? "").split(":").concat(["/usr/sbin", "/sbin"])) {
    try {
      await access(join(directory, "debootstrap"));
      return true;
    } catch {}
  }
  return false;
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
  await buildDebootstrapImage({
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

export type DebootstrapImageRecipe = {
  docker?: ContainerEngine;
  /** Image name to produce, "repository:tag". */
  name: string;
  /** Debian packages for `debootstrap --variant=minbase --include=...` (bookworm). */
  debianPackages: string[];
  /** A shell script run in a chroot of the tree before the import (path on the host). */
  additionsScript: string;
  /** Dockerfile instructions for `docker import --change`; one of them must set the RECIPE_LABEL label. */
  changes: string[];
  /** The recipe version the RECIPE_LABEL label must carry after the import (checked). */
  version: string;
  /** Debian mirror (default $CODEACTION_DEBIAN_MIRROR or deb.debian.org). */
  mirror?: string;
  onProgress?: (line: string) => void;
};

/**
 * The offline build path, for any image: a Debian root filesystem from debootstrap with the given
 * packages, an additions script run in a chroot, then `docker import` with the given changes.
 * Needs root on Linux and debootstrap; throws ImageBuildError otherwise.
 */
export async function buildDebootstrapImage(recipe: DebootstrapImageRecipe): Promise<void> {
  const name = recipe.name;
  const docker = recipe.docker ?? defaultDocker();
  const progress = recipe.onProgress ?? (() => {});
  if (!(await offlineAvailable())) {
    throw new ImageBuildError(
      `Cannot build ${name} offline: it needs root on Linux and debootstrap (apt-get install debootstrap). ` +
        "With a registry reachable, use the Dockerfile path instead (method 'dockerfile').",
    );
  }
  const mirror = recipe.mirror ?? process.env.CODEACTION_DEBIAN_MIRROR ?? "http://deb.debian.org/debian";
  const work = await mkdtemp(join(process.env.CODEACTION_BUILD_DIR ?? tmpdir(), "codeaction-rootfs-"));
  const root = join(work, "rootfs");
  try {
    const packages = recipe.debianPackages.join(",");
    // The same "Step N/M : ..." lines a Dockerfile build reports, so one reader follows both paths.
    progress(
      `Step 1/3 : debootstrap --variant=minbase --include=${packages} ${DEBIAN_SUITE} (about a minute)`,
    );
    await run(
      "debootstrap",
      ["--variant=minbase", `--include=${packages}`, DEBIAN_SUITE, root, mirror],
      progress,
    );
    await copyFile(recipe.additionsScript, join(root, "tmp/additions.sh"));
    progress(`Step 2/3 : sh ${basename(recipe.additionsScript)} in a chroot of the tree`);
    await run("chroot", [root, "/bin/sh", "/tmp/additions.sh"], progress);
    await rm(join(root, "tmp/additions.sh"));
    progress(`Step 3/3 : docker import of the tree as ${name}`);
    const tar = spawn("tar", ["--numeric-owner", "-C", root, "-c", "."], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tarError = "";
    tar.stderr.on("data", (chunk: Buffer) => {
      tarError += chunk.toString();
    });
    // Listen now: a small tree can be archived before the import stream ends.
    const tarExit = new Promise<number | null>((done) => tar.on("close", done));
    const [repo, tag] = splitName(name);
    const stream = await docker.importImage(tar.stdout, { repo, tag, changes: recipe.changes } as object);
    await followJsonStream(stream as NodeJS.ReadableStream, progress, `docker import of ${name}`);
    const code = await tarExit;
    if (code !== 0)
      throw new ImageBuildError(`tar of the root filesystem failed (exit ${code}): ${tarError}`);
    const info = await docker.getImage(name).inspect();
    if (info.Config?.Labels?.[RECIPE_LABEL] !== recipe.version) {
      throw new ImageBuildError(
        `docker import of ${name} did not apply the recipe label; the image is unusable`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function splitName(name: string): [string, string] {
  const at = name.lastIndexOf(":");
  return at > name.lastIndexOf("/") ? [name.slice(0, at), name.slice(at + 1)] : [name, "latest"];
}

/** Runs a build step, passing each line it prints to `progress`; its last 20 lines go in the error when it fails. */
function run(command: string, args: string[], progress: (line: string) => void): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const tail: string[] = [];
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) {
        if (!line.trim()) continue;
        progress(line);
        tail.push(line);
        if (tail.length > 20) tail.shift();
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.on("error", (error) => fail(new ImageBuildError(`${command} could not start: ${error.message}`)));
    child.on("close", (code) => {
      if (code === 0) return done();
      fail(new ImageBuildError(`${command} ${args.join(" ")} failed (exit ${code}):\n${tail.join("\n")}`));
    });
  });
}

/** Docker reports build and import errors as JSON lines inside a 200 response: read to the end. */
function followJsonStream(
  stream: NodeJS.ReadableStream,
  progress: (line: string) => void,
  what: string,
): Promise<void> {
  return new Promise((done, fail) => {
    let buffer = "";
    let failure: string | undefined;
    stream.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        if (!line) continue;
        try {
          const event = JSON.parse(line) as { stream?: string; status?: string; error?: string };
          if (event.error) failure = event.error;
          const text = (event.stream ?? event.status ?? "").trim();
          if (text) progress(text);
        } catch {
          progress(line);
        }
      }
    });
    stream.on("error", (error: Error) => fail(new ImageBuildError(`${what} failed: ${error.message}`)));
    stream.on("end", () => (failure ? fail(new ImageBuildError(`${what} failed: ${failure}`)) : done()));
  });
}
