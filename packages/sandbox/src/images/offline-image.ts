import { spawn } from "node:child_process";
import { access, copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { defaultDocker } from "../connection/connect-docker.ts";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { ImageBuildError } from "../errors/image-build-error.ts";

/**
 * The offline build path of every project image (the sandbox images and the egress proxy): a Debian
 * root filesystem from mmdebstrap with the given packages, an additions script run in a chroot of
 * the tree, then `tar | docker import`. Images carry their recipe version in the `codeaction.recipe`
 * label; `OFFLINE_TREE_METHOD` is part of every recipe version, so a changed method rebuilds.
 */
export const RECIPE_LABEL = "codeaction.recipe";
export const DEBIAN_SUITE = "bookworm";

/**
 * How the tree is made, hashed into the recipe versions. mmdebstrap's minbase is debootstrap's
 * (Priority: required and apt, no Recommends); the merged-usr hook installs usr-is-merged as
 * debootstrap does (without it apt picks usrmerge and pulls in perl). Parallel downloads and dpkg
 * without fsync make it faster; the package set is the same.
 */
export const OFFLINE_TREE_METHOD = "mmdebstrap --variant=minbase merged-usr force-unsafe-io";
const MERGED_USR_HOOKS = "/usr/share/mmdebstrap/hooks/merged-usr";
/** mmdebstrap leaves --dpkgopt options in the tree: removed, so the image's dpkg fsyncs as usual. */
const DPKG_OPTIONS_FILE = "etc/dpkg/dpkg.cfg.d/99mmdebstrap";

export type OfflineImageRecipe = {
  docker?: ContainerEngine;
  /** Image name to produce, "repository:tag". */
  name: string;
  /** Debian packages for the tree (`mmdebstrap --variant=minbase --include=...`, bookworm). */
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

/** Whether the offline path can run here: root on Linux with mmdebstrap and its merged-usr hooks. */
export async function offlineAvailable(): Promise<boolean> {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  try {
    await access(MERGED_USR_HOOKS);
  } catch {
    return false;
  }
  for (const directory of (process.env.PATH ?? "").split(":").concat(["/usr/bin", "/usr/sbin"])) {
    try {
      await access(join(directory, "mmdebstrap"));
      return true;
    } catch {}
  }
  return false;
}

/** Builds an image offline (see the module's comment). Throws ImageBuildError when it cannot. */
export async function buildOfflineImage(recipe: OfflineImageRecipe): Promise<void> {
  const name = recipe.name;
  const progress = recipe.onProgress ?? (() => {});
  if (!(await offlineAvailable())) {
    throw new ImageBuildError(
      `Cannot build ${name} offline: it needs root on Linux and mmdebstrap (apt-get install --no-install-recommends mmdebstrap). ` +
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
      `Step 1/3 : mmdebstrap --variant=minbase --include=${packages} ${DEBIAN_SUITE} (under a minute)`,
    );
    await run("mmdebstrap", treeArguments(packages, root, mirror), progress);
    await rm(join(root, DPKG_OPTIONS_FILE), { force: true });
    await copyFile(recipe.additionsScript, join(root, "tmp/additions.sh"));
    progress(`Step 2/3 : sh ${basename(recipe.additionsScript)} in a chroot of the tree`);
    await run("chroot", [root, "/bin/sh", "/tmp/additions.sh"], progress);
    await rm(join(root, "tmp/additions.sh"));
    progress(`Step 3/3 : docker import of the tree as ${name}`);
    await importTree(recipe.docker ?? defaultDocker(), root, recipe, progress);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function treeArguments(packages: string, root: string, mirror: string): string[] {
  return [
    "--variant=minbase",
    "--mode=root",
    "--format=directory",
    `--hook-dir=${MERGED_USR_HOOKS}`,
    "--dpkgopt=force-unsafe-io",
    `--include=${packages}`,
    DEBIAN_SUITE,
    root,
    mirror,
  ];
}

async function importTree(
  docker: ContainerEngine,
  root: string,
  recipe: OfflineImageRecipe,
  progress: (line: string) => void,
): Promise<void> {
  const tar = spawn("tar", ["--numeric-owner", "-C", root, "-c", "."], { stdio: ["ignore", "pipe", "pipe"] });
  let tarError = "";
  tar.stderr.on("data", (chunk: Buffer) => {
    if (tarError.length < 4096) tarError += chunk.toString();
  });
  // Listen now: a small tree can be archived before the import stream ends.
  const tarExit = new Promise<number | null>((done) => tar.on("close", done));
  const [repo, tag] = splitName(recipe.name);
  const stream = await docker.importImage(tar.stdout, { repo, tag, changes: recipe.changes } as object);
  await followJsonStream(stream, progress, `docker import of ${recipe.name}`);
  const code = await tarExit;
  if (code !== 0) throw new ImageBuildError(`tar of the root filesystem failed (exit ${code}): ${tarError}`);
  const info = await docker.getImage(recipe.name).inspect();
  if (info.Config?.Labels?.[RECIPE_LABEL] !== recipe.version) {
    throw new ImageBuildError(
      `docker import of ${recipe.name} did not apply the recipe label; the image is unusable`,
    );
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
export function followJsonStream(
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
