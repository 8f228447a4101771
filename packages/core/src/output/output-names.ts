// The host names of the files that come back from /workspace/out: sanitised, and unique for every
// part of the path, compared without case (macOS and Windows file systems ignore it).

const maxNameCharacters = 100;

/** One part: characters outside [A-Za-z0-9._-] become "_", no leading dot, at most 100 characters. */
export function sanitisePart(part: string): string {
  const clean = part
    .normalize("NFKC")
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, "_")
    .slice(0, maxNameCharacters);
  return clean === "" ? "_" : clean;
}

/** Each part sanitised (sanitisePart), joined with "/". */
export function sanitiseName(parts: string[]): string {
  return parts.map(sanitisePart).join("/");
}

/**
 * A name's raw bytes as text to show: UTF-8 as it is, any other byte as `\xNN` (never U+FFFD, so
 * two different names never look the same).
 */
export function showName(part: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(part);
  } catch {
    return [...part]
      .map((byte) => (byte < 0x80 ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, "0")}`))
      .join("");
  }
}

/**
 * Gives every file a host path no other file or folder of the run has: a folder keeps one host
 * name for all its files, and a part already taken in its folder (by a file or a folder, in any
 * case) gets a number ("a_" and "a?" become "a_" and "a_-2").
 */
export class HostPaths {
  /** Folder (raw parts as hex, joined with "/") -> its host path. */
  private readonly folders = new Map<string, string>();
  /** Host folder path, lower case ("" for the top) -> the lower-case names taken in it. */
  private readonly taken = new Map<string, Set<string>>();

  /** The host path of a file whose raw name is `parts` (folders first, the file's own name last). */
  fileName(parts: Buffer[]): string {
    const folder = this.folderName(parts.slice(0, -1));
    const own = this.claim(folder, sanitisePart(showName(parts.at(-1) ?? Buffer.alloc(0))));
    return folder === "" ? own : `${folder}/${own}`;
  }

  private folderName(parts: Buffer[]): string {
    let path = "";
    for (let index = 0; index < parts.length; index += 1) {
      const key = parts
        .slice(0, index + 1)
        .map((part) => part.toString("hex"))
        .join("/");
      const known = this.folders.get(key);
      if (known !== undefined) {
        path = known;
        continue;
      }
      const own = this.claim(path, sanitisePart(showName(parts[index]!)));
      path = path === "" ? own : `${path}/${own}`;
      this.folders.set(key, path);
    }
    return path;
  }

  /** `name`, or `name-2`, `name-3`... (before the extension): the first not yet taken in `folder`. */
  private claim(folder: string, name: string): string {
    const key = folder.toLowerCase();
    let names = this.taken.get(key);
    if (!names) {
      names = new Set();
      this.taken.set(key, names);
    }
    let candidate = name;
    for (let index = 2; names.has(candidate.toLowerCase()); index += 1) {
      const dot = name.lastIndexOf(".");
      candidate = dot > 0 ? `${name.slice(0, dot)}-${index}${name.slice(dot)}` : `${name}-${index}`;
    }
    names.add(candidate.toLowerCase());
    return candidate;
  }
}
