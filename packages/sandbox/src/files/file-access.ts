// The session's file operations: each one shell script run as one exec (works on the read-only root),
// with its path confined to /workspace and /tmp before and after links are resolved.
import { randomUUID } from "node:crypto";
import { execMarkerName } from "../config.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { PathRefusedError } from "../errors/path-refused-error.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { startExec, waitForExecExit } from "../process/exec.ts";
import { captureOutput } from "../process/exec-connection.ts";
import type { SessionHost } from "../process/run-command.ts";
import { refuseOutsideRootsLine, resolveSandboxPath } from "./path-confinement.ts";

/** One entry of `session.listFiles()`. */
export type FileEntry = {
  name: string;
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
};

type ScriptResult = { exitCode: number; stdout: Buffer; stderr: string; truncated: boolean };

/** Runs argv with optional stdin bytes, within the session's time limit. */
async function runWithInput(
  host: SessionHost,
  argv: string[],
  options: { input?: Buffer; maxOutputBytes?: number },
): Promise<ScriptResult> {
  await host.ready();
  const launched = host.launched();
  await host.helperReady(launched);
  const id = randomUUID();
  const { exec, stream } = await startExec(launched.container, {
    argv,
    env: { [execMarkerName]: id },
    cwd: "/",
    stdin: options.input !== undefined,
    guard: launched.guardExecs,
  });
  const output = captureOutput(stream, {
    stdout: options.maxOutputBytes ?? host.config.maxOutputBytes,
    stderr: 64 * 1024,
  });
  if (options.input !== undefined) stream.end(options.input);
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    output.ended.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), host.config.timeout * 1000);
    }),
  ]);
  clearTimeout(timer);
  destroyStream(stream);
  if (!inTime) {
    await host.killMarked(id).catch(() => undefined);
    throw new SandboxError(`The file operation did not finish within ${host.config.timeout} seconds.`, {
      code: "file-timeout",
    });
  }
  return {
    exitCode: await waitForExecExit(exec),
    stdout: output.stdout.contents(),
    stderr: output.stderr.contents().toString("utf8").trim(),
    truncated: output.stdout.truncated,
  };
}

/** Exit 3 of a script: the path (or its folder) is a link out of /workspace and /tmp. */
function refuseLinkOutside(result: ScriptResult, path: string, what: "it" | "its folder"): void {
  if (result.exitCode !== 3) return;
  throw new PathRefusedError({
    path,
    reason: `${what} is a link to ${result.stderr}, outside /workspace and /tmp`,
  });
}

/**
 * Writes a file from inside the container: the bytes stream through an exec's stdin into a
 * temporary name in the same folder, which is then renamed into place. Missing folders are created.
 */
export async function writeSandboxFile(
  host: SessionHost,
  path: string,
  content: string | Uint8Array,
): Promise<void> {
  const target = resolveSandboxPath(path, { workdir: host.config.workdir });
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
  const script = [
    'if [ -d "$1" ]; then echo "$1 is a directory" >&2; exit 1; fi',
    'folder=$(dirname -- "$1")',
    'mkdir -p -- "$folder" || exit 1',
    // A folder on the way may be a link: the real folder must still be under /workspace or /tmp.
    'real=$(realpath -e -- "$folder") || exit 1',
    refuseOutsideRootsLine,
    'temporary="$real/.codeaction-write-$2"',
    'if ! cat > "$temporary"; then rm -f -- "$temporary"; exit 1; fi',
    'mv -f -- "$temporary" "$real/$(basename -- "$1")"',
  ].join("\n");
  const result = await runWithInput(
    host,
    ["/bin/sh", "-c", script, "codeaction-write", target, randomUUID()],
    {
      input: bytes,
    },
  );
  refuseLinkOutside(result, path, "its folder");
  if (result.exitCode !== 0) {
    throw new SandboxError(`Could not write ${target}: ${result.stderr || `exit ${result.exitCode}`}`, {
      code: "file-write-failed",
    });
  }
}

/** Reads a file (binary-safe), at most `maxBytes` (default 10 MiB); `truncated` says whether there was more. */
export async function readSandboxFile(
  host: SessionHost,
  path: string,
  options: { maxBytes?: number } = {},
): Promise<{ content: Buffer; truncated: boolean }> {
  const target = resolveSandboxPath(path, { workdir: host.config.workdir });
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const script = [
    'real=$(realpath -e -- "$1") || exit 2',
    refuseOutsideRootsLine,
    'if [ ! -f "$real" ]; then echo "not a regular file" >&2; exit 4; fi',
    'exec head -c "$2" -- "$real"',
  ].join("\n");
  const result = await runWithInput(
    host,
    ["/bin/sh", "-c", script, "codeaction-read", target, String(maxBytes + 1)],
    {
      maxOutputBytes: maxBytes,
    },
  );
  refuseLinkOutside(result, path, "it");
  if (result.exitCode !== 0) {
    throw new SandboxError(`Could not read ${target}: ${result.stderr || `exit ${result.exitCode}`}`, {
      code: result.exitCode === 2 ? "file-not-found" : "file-read-failed",
    });
  }
  return { content: result.stdout, truncated: result.truncated };
}

/** The entries of one folder (not recursive), sorted by name. */
export async function listSandboxFiles(host: SessionHost, directory?: string): Promise<FileEntry[]> {
  const target = resolveSandboxPath(directory ?? host.config.workdir, { workdir: host.config.workdir });
  const script = [
    'real=$(realpath -e -- "$1") || exit 2',
    refuseOutsideRootsLine,
    'if [ ! -d "$real" ]; then echo "not a folder" >&2; exit 4; fi',
    "exec find \"$real\" -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%f\\0'",
  ].join("\n");
  const result = await runWithInput(host, ["/bin/sh", "-c", script, "codeaction-list", target], {
    maxOutputBytes: 16 * 1024 * 1024,
  });
  refuseLinkOutside(result, target, "it");
  if (result.exitCode !== 0) {
    throw new SandboxError(`Could not list ${target}: ${result.stderr || `exit ${result.exitCode}`}`, {
      code: result.exitCode === 2 ? "file-not-found" : "file-list-failed",
    });
  }
  return parseFileEntries(result.stdout.toString("utf8"), target);
}

/** find's `%y\t%s\t%f\0` records as entries, sorted by name. */
function parseFileEntries(records: string, folder: string): FileEntry[] {
  const types: Record<string, FileEntry["type"]> = { f: "file", d: "directory", l: "symlink" };
  return records
    .split("\0")
    .filter((record) => record.length > 0)
    .map((record) => {
      const [type = "", size = "0", ...nameParts] = record.split("\t");
      const name = nameParts.join("\t");
      return {
        name,
        path: folder === "/" ? `/${name}` : `${folder}/${name}`,
        type: types[type] ?? "other",
        size: Number(size),
      };
    })
    .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
}
