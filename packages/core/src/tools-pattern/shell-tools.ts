import { posix } from "node:path";
import type { SandboxConfig, SandboxSession } from "@codeaction/sandbox";
import { z } from "zod";
import { ToolInputError } from "../errors/tool-input-error.ts";
import type { JsonSchema, ToolSpec } from "../tools/tool-spec.ts";
import { capOutput, defaultOutputCap } from "./cap-output.ts";

/** What sandbox_exec and sandbox_install_package get back from the session. */
type CommandResult = Awaited<ReturnType<SandboxSession["execute"]>>;

/**
 * A shell-mode session still starting: its settings are known, its container comes when `started`
 * resolves (each tool call waits for it; a start that failed fails every call with its cause).
 */
export type StartingSession = { config: SandboxConfig; started: Promise<SandboxSession> };

/** What every shell tool shares: the session (when started), its settings and the output cap. */
type ShellToolContext = {
  current: () => Promise<SandboxSession>;
  config: SandboxConfig;
  outputCap: number;
};

/**
 * Shell mode: five tools over ONE long-lived sandbox session, started or still starting (so the
 * container can start while the model thinks). The session's container is the caller's to
 * close. Every stream and file handed to the model is cut at `outputCap` bytes (default 16 KiB)
 * with a note of how much was cut.
 */
export function createShellTools(
  source: SandboxSession | StartingSession,
  options: { outputCap?: number } = {},
): ToolSpec[] {
  const outputCap = options.outputCap ?? defaultOutputCap;
  if (!Number.isInteger(outputCap) || outputCap < 1) {
    throw new RangeError(`outputCap must be a whole number of bytes, at least 1, got ${outputCap}.`);
  }
  const context: ShellToolContext = {
    current: () => ("started" in source ? source.started : Promise.resolve(source)),
    config: source.config,
    outputCap,
  };
  return [
    execTool(context),
    readFileTool(context),
    writeFileTool(context),
    listFilesTool(context),
    installPackageTool(context),
  ];
}

/** sandbox_exec: one shell command, its exit code and both streams. */
function execTool({ current, config, outputCap }: ShellToolContext): ToolSpec {
  const { timeout: maxTimeout, workdir } = config;
  // Keep a little more than the cap, so a cut can be seen and measured.
  const streamOptions = { outputCap, captureLimit: Math.max(config.maxOutputBytes, outputCap + 1) };
  return shellTool({
    name: "sandbox_exec",
    description:
      `Run a shell command (/bin/sh -c) in the sandbox container, starting in ${workdir}. ${sandboxFacts(config)} ` +
      `The command is killed, with every process it started, after \`timeout\` seconds ` +
      `(default and maximum ${maxTimeout}). Returns the exit code, stdout, stderr and the duration; ` +
      `each stream is cut at ${outputCap} bytes, so write large output to a file and look at parts of it.`,
    schema: z.object({
      command: z.string().min(1).describe("The shell command, e.g. `python3 scripts/fib.py`."),
      timeout: z
        .number()
        .positive()
        .optional()
        .describe(`Seconds before the command is killed; at most ${maxTimeout}.`),
    }),
    async run({ command, timeout }) {
      const seconds = Math.min(timeout ?? maxTimeout, maxTimeout);
      const result = await (await current()).execute(command, {
        timeout: seconds,
        maxOutputBytes: streamOptions.captureLimit,
      });
      const lines = [describeCommand(result, seconds)];
      if (timeout !== undefined && timeout > maxTimeout) {
        lines.push(`(timeout lowered from ${timeout} to the sandbox's maximum of ${maxTimeout} seconds)`);
      }
      return [...lines, ...streams(result, streamOptions)].join("\n");
    },
  });
}

/** sandbox_read_file: a text file, cut at the cap. */
function readFileTool({ current, config, outputCap }: ShellToolContext): ToolSpec {
  const { workdir } = config;
  return shellTool({
    name: "sandbox_read_file",
    description:
      `Read a text file in the sandbox (relative paths start at ${workdir}; only /workspace and /tmp). ` +
      `Files are cut at ${outputCap} bytes; read larger ones in parts with sandbox_exec (head, tail, sed -n).`,
    schema: z.object({ path: z.string().min(1).describe("The file, e.g. /workspace/output.txt.") }),
    async run({ path }) {
      const session = await current();
      const file = await session.readFile(path, { maxBytes: outputCap });
      if (file.content.includes(0)) {
        return `${path} is a binary file (it contains NUL bytes); inspect it with sandbox_exec (xxd, base64, file).`;
      }
      const { text, note } = capOutput(file.content.toString("utf8"), {
        cap: outputCap,
        label: path,
        producerTruncated: file.truncated,
        ...(file.truncated ? { totalBytes: await fileSize(session, posix.resolve(workdir, path)) } : {}),
      });
      return note ? `${text}\n${note}` : text;
    },
  });
}

/** sandbox_write_file: a whole text file, folders created. */
function writeFileTool({ current, config }: ShellToolContext): ToolSpec {
  const { workdir } = config;
  return shellTool({
    name: "sandbox_write_file",
    description:
      `Write a text file in the sandbox, replacing it if it exists and creating missing folders. ` +
      `Relative paths start at ${workdir}; only /workspace and /tmp are writable (the rest is read-only). ` +
      `Files in /workspace stay for the next commands.`,
    schema: z.object({
      path: z.string().min(1).describe("The file, e.g. /workspace/scripts/fib.py."),
      content: z.string().describe("The whole content of the file."),
    }),
    async run({ path, content }) {
      await (await current()).writeFile(path, content);
      return `Wrote ${Buffer.byteLength(content, "utf8")} bytes to ${posix.resolve(workdir, path)}.`;
    },
  });
}

/** sandbox_list_files: one folder's entries, cut at the cap. */
function listFilesTool({ current, config, outputCap }: ShellToolContext): ToolSpec {
  return shellTool({
    name: "sandbox_list_files",
    description:
      `List the entries of one folder in the sandbox (not recursive): type, size in bytes, name. ` +
      `Only /workspace and /tmp can be listed.`,
    schema: z.object({
      directory: z.string().min(1).default("/workspace").describe("The folder to list (default /workspace)."),
    }),
    async run({ directory }) {
      const entries = await (await current()).listFiles(directory);
      const folder = posix.resolve(config.workdir, directory);
      if (entries.length === 0) return `${folder} is empty.`;
      const lines = entries.map((entry) =>
        entry.type === "directory"
          ? `directory  ${entry.name}/`
          : `${entry.type}  ${entry.size}  ${entry.name}`,
      );
      const { text, note } = capOutput(`${folder}:\n${lines.join("\n")}`, {
        cap: outputCap,
        label: "listing",
      });
      return note ? `${text}\n${note}` : text;
    },
  });
}

/** sandbox_install_package: pip into /workspace/.packages. */
function installPackageTool({ current, config, outputCap }: ShellToolContext): ToolSpec {
  const installOptions = { outputCap, captureLimit: config.maxOutputBytes };
  return shellTool({
    name: "sandbox_install_package",
    description:
      `Install a Python package with pip into /workspace/.packages (already on PYTHONPATH). ` +
      `Give one package specification such as "requests" or "numpy==2.1.0". ` +
      (config.network === "none"
        ? "The sandbox has no network, so installing fails: use what the image provides."
        : "Needs network access to the package index."),
    schema: z.object({
      package: z.string().min(1).describe('One package specification, e.g. "requests" or "numpy==2.1.0".'),
      tool: z.enum(["python"]).default("python").describe('The package manager: "python" (pip).'),
    }),
    async run({ package: name, tool }) {
      const result = await (await current()).installPackage(name, { tool });
      const output = streams(result, { ...installOptions, skipEmpty: true });
      if (result.exitCode === 0)
        return [`Installed ${name.trim()} into /workspace/.packages.`, ...output].join("\n");
      const reason =
        result.timedOut || result.oomKilled
          ? describeCommand(result, config.timeout)
          : `exit code ${result.exitCode}`;
      return [`Could not install ${name.trim()} (${reason}).`, ...output].join("\n");
    },
  });
}

/** The size of a file, from its folder's listing; undefined when it cannot be told. */
async function fileSize(session: SandboxSession, path: string): Promise<number | undefined> {
  const entries = await session.listFiles(posix.dirname(path)).catch(() => []);
  return entries.find((entry) => entry.name === posix.basename(path) && entry.type === "file")?.size;
}

/** What every tool description says about the container. */
function sandboxFacts(config: SandboxConfig): string {
  const network =
    config.network === "none"
      ? "There is no network (no DNS, no internet)."
      : config.network === "full"
        ? "The network is open."
        : "The network only reaches an allow-list of hosts.";
  return (
    `/workspace is writable and kept between commands; /tmp is scratch space; the rest of the file ` +
    `system is read-only. ${network} Python 3 is installed.`
  );
}

function describeCommand(result: CommandResult, timeoutSeconds: number): string {
  const duration = `${(result.durationMs / 1000).toFixed(2)} s`;
  let line: string;
  if (result.timedOut) {
    line = `exit code: none: timed out after ${timeoutSeconds} seconds; the command and every process it started were killed (${duration}). The output below is what it printed before that.`;
  } else if (result.oomKilled) {
    line = `exit code: ${result.exitCode}: killed for using more memory than the sandbox allows (${duration}).`;
  } else {
    line = `exit code: ${result.exitCode} (${duration})`;
  }
  if (result.workspaceReset) line += "\nThe sandbox container was replaced: /workspace is empty again.";
  return line;
}

/**
 * Both streams, each cut at the cap. `captureLimit` is what the session kept per stream: a stream
 * that reached it was cut by the session already, so the note says "more than".
 */
function streams(
  result: CommandResult,
  options: { outputCap: number; captureLimit: number; skipEmpty?: boolean },
): string[] {
  const lines: string[] = [];
  for (const [label, text, totalBytes] of [
    ["stdout", result.stdout, result.stdoutBytes],
    ["stderr", result.stderr, result.stderrBytes],
  ] as const) {
    if (text.length === 0) {
      if (!options.skipEmpty) lines.push(`${label}: (empty)`);
      continue;
    }
    // Decoding can turn a character split at the limit into a few replacement bytes: allow for it.
    const producerTruncated = result.truncated && Buffer.byteLength(text, "utf8") >= options.captureLimit - 3;
    const capped = capOutput(text, {
      cap: options.outputCap,
      label,
      producerTruncated,
      ...(totalBytes === undefined ? {} : { totalBytes }),
    });
    lines.push(`${label}:`, capped.text.endsWith("\n") ? capped.text.slice(0, -1) : capped.text);
    if (capped.note) lines.push(capped.note);
  }
  return lines;
}

/** A ToolSpec whose arguments are checked with zod before `run`; bad ones throw ToolInputError. */
function shellTool<Schema extends z.ZodObject>(definition: {
  name: string;
  description: string;
  schema: Schema;
  run(args: z.output<Schema>): Promise<string>;
}): ToolSpec {
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(definition.schema, { io: "input" });
  const check = (args: Record<string, unknown>): z.output<Schema> => {
    const parsed = definition.schema.safeParse(args);
    if (parsed.success) return parsed.data;
    throw new ToolInputError({
      tool: definition.name,
      issues: formatIssues(parsed.error),
      cause: parsed.error,
    });
  };
  return {
    name: definition.name,
    description: definition.description,
    inputSchema: inputSchema as JsonSchema,
    origin: "sandbox",
    async validate(args) {
      check(args);
    },
    async invoke(args) {
      return definition.run(check(args));
    },
  };
}

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}
