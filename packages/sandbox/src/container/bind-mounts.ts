// The container's bind mounts: host files (never folders) read-only at their /workspace/data path,
// private propagation (files/mount-files.ts checks them), and the read-back that accepts exactly
// those and nothing else.
import type { ContainerInspectInfo, HostConfig } from "../engine/container-engine.ts";

/** The bind mounts of a container: each host file (`source`) at its path inside (`target`), read-only. */
export type BindMount = { source: string; target: string };

/** HostConfig.Mounts for the files: `bind`, read-only, propagation private. */
export function bindMountsSpec(mounts: readonly BindMount[]): NonNullable<HostConfig["Mounts"]> {
  return mounts.map((mount) => ({
    Type: "bind" as const,
    Source: mount.source,
    Target: mount.target,
    ReadOnly: true,
    BindOptions: { Propagation: "private" as const },
  }));
}

type InspectedMount = {
  Type?: string;
  Source?: string;
  Destination?: string;
  Target?: string;
  RW?: boolean;
  ReadOnly?: boolean;
  Propagation?: string;
  BindOptions?: { Propagation?: string };
};

const key = (source: string | undefined, target: string | undefined) => `${source}\u0000${target}`;

/**
 * The mounts the engine reports (the container's `Mounts` and HostConfig's), each compared with the
 * expected ones: the same count, each a read-only private bind of an expected file at its path, no
 * `Binds`. Empty means exactly the expected mounts took.
 */
export function findBindMountProblems(
  info: ContainerInspectInfo,
  host: HostConfig,
  expected: readonly BindMount[],
): string[] {
  const problems: string[] = [];
  const wanted = new Set(expected.map((mount) => key(mount.source, mount.target)));
  if ((host.Binds ?? []).length > 0) problems.push(`host folders are bound: ${JSON.stringify(host.Binds)}`);
  const reported = (info.Mounts ?? []) as InspectedMount[];
  const asked = (host.Mounts ?? []) as InspectedMount[];
  const good = (mount: InspectedMount) =>
    mount.Type === "bind" &&
    wanted.has(key(mount.Source, mount.Destination)) &&
    mount.RW === false &&
    mount.Propagation === "private";
  const goodAsked = (mount: InspectedMount) =>
    mount.Type === "bind" &&
    wanted.has(key(mount.Source, mount.Target)) &&
    mount.ReadOnly === true &&
    mount.BindOptions?.Propagation === "private";
  if (reported.length !== expected.length || !reported.every(good)) {
    problems.push(`the container's mounts are not the expected read-only files: ${JSON.stringify(reported)}`);
  }
  if (asked.length !== expected.length || !asked.every(goodAsked)) {
    problems.push(`HostConfig.Mounts is not the expected read-only files: ${JSON.stringify(asked)}`);
  }
  const distinct = new Set(reported.map((mount) => key(mount.Source, mount.Destination)));
  if (distinct.size !== reported.length) problems.push("a mount is reported twice");
  return problems;
}
