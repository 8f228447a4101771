import { availableParallelism } from "node:os";
import { z } from "zod";
import { SandboxConfigError } from "./errors/sandbox-config-error.ts";
import { DEFAULT_IMAGE } from "./images/names.ts";

/** The environment variable that marks every process a command starts (see kill-helper.ts). Reserved. */
export const execMarkerName = "CODEACTION_EXEC_ID";

const sizeUnits: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** "4G", "512M", "512m", "1.5G", "2GiB", "1048576" -> bytes. Returns undefined for anything else. */
export function parseSize(value: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(value);
  if (!match) return undefined;
  const unit = sizeUnits[(match[2] ?? "").toUpperCase()];
  if (unit === undefined) return undefined;
  return Math.floor(Number(match[1]) * unit);
}

function sizeField(options: {
  name: string;
  minimum: number;
  maximum: number;
  minimumText: string;
  maximumText: string;
}) {
  return z.union([z.string(), z.number()]).superRefine((value, context) => {
    const bytes = typeof value === "number" ? value : parseSize(value);
    if (bytes === undefined || !Number.isFinite(bytes)) {
      context.addIssue({
        code: "custom",
        message: `${options.name} must be a size such as "512M" or "4G" (K, M, G, T suffixes), got ${JSON.stringify(value)}`,
      });
      return;
    }
    if (bytes < options.minimum || bytes > options.maximum) {
      context.addIssue({
        code: "custom",
        message: `${options.name} must be between ${options.minimumText} and ${options.maximumText}, got ${JSON.stringify(value)}`,
      });
    }
  });
}

function rangeNumber(options: { name: string; minimum: number; maximum: number; integer: boolean }) {
  const base = z.number({ error: `${options.name} must be a number` });
  return base.superRefine((value, context) => {
    if ((options.integer && !Number.isInteger(value)) || value < options.minimum || value > options.maximum) {
      context.addIssue({
        code: "custom",
        message: `${options.name} must be ${options.integer ? "an integer " : ""}between ${options.minimum} and ${options.maximum}, got ${value}`,
      });
    }
  });
}

function positiveCount(options: { name: string; minimum: number }) {
  return z.number({ error: `${options.name} must be a number` }).superRefine((value, context) => {
    if (!Number.isInteger(value) || value < options.minimum) {
      context.addIssue({
        code: "custom",
        message: `${options.name} must be an integer of at least ${options.minimum}, got ${value}`,
      });
    }
  });
}

const environmentName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Live containers per manager unless set: two per CPU core (starting a container is CPU work, and
 * a run mostly waits on its tools), at least 4 and at most 16. 4 on this project's 2-core machines.
 */
export const defaultMaxConcurrent = Math.min(16, Math.max(4, 2 * availableParallelism()));

const allowListSchema = z.strictObject({
  allow: z.array(z.string().min(1)),
  hosts: z.record(z.string(), z.string()).optional(),
});

const networkSchema = z.union(
  [z.literal("none"), z.literal("full"), z.literal("restricted"), allowListSchema],
  { error: `network must be "none", "full", "restricted" or { allow: [...] }` },
);

const userSchema = z.string().superRefine((value, context) => {
  if (value === "root" || /^\d+(?::\d+)?$/.test(value)) return;
  context.addIssue({
    code: "custom",
    message: `user must be "root" or a numeric "uid" or "uid:gid" (unset, each sandbox gets its own uid from userRange), got ${JSON.stringify(value)}`,
  });
});

/**
 * Where each sandbox's own uid (and the same gid) comes from when `user` is not set: 2^24 ids from
 * 0x70000000, inside the block systemd's UID/GID ranges document leaves unused (above its container
 * ranges, below its foreign range and the 2^31 sign boundary), so no login, system or nspawn user
 * shares one.
 */
export const defaultUserRange = { first: 0x7000_0000, count: 2 ** 24 } as const;

/** The highest uid a range may reach: ids from 2^31 up trip tools that read uid_t as signed. */
const highestUid = 2 ** 31 - 1;

const userRangeSchema = z
  .strictObject(
    {
      first: z.number({ error: "userRange.first must be a number" }),
      count: z.number({ error: "userRange.count must be a number" }),
    },
    { error: "userRange must be an object such as { first: 1879048192, count: 16777216 }" },
  )
  .superRefine((range, context) => {
    const problem = userRangeProblem(range);
    if (problem) context.addIssue({ code: "custom", message: problem });
  });

function userRangeProblem(range: { first: number; count: number }): string | undefined {
  if (!Number.isInteger(range.first) || range.first < 1) {
    return `userRange.first must be an integer of at least 1 (uid 0 is root), got ${range.first}`;
  }
  if (!Number.isInteger(range.count) || range.count < 1) {
    return `userRange.count must be an integer of at least 1, got ${range.count}`;
  }
  const last = range.first + range.count - 1;
  if (last > highestUid) {
    return `userRange ends at ${last}, above ${highestUid}: ids from 2^31 up are read as negative by some tools; lower first or count`;
  }
  if (range.first <= 65535 && last >= 65534) {
    return `userRange ${range.first}-${last} holds 65534 (nobody) or 65535 (16-bit -1); start it above 65535 (the default starts at ${defaultUserRange.first})`;
  }
  return undefined;
}

const pathInsideWorkspace = z.string().superRefine((value, context) => {
  if (!/^\/(workspace|tmp)(\/|$)/.test(value) || value.includes("\0") || value.split("/").includes("..")) {
    context.addIssue({
      code: "custom",
      message: `workdir must be /workspace, /tmp or a folder inside them, got ${JSON.stringify(value)}`,
    });
  }
});

const optionalText = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .min(1)
    .optional();

/** Which Docker engine (see engine/engine-settings.ts); unset, the environment decides as for the docker CLI. */
const engineSchema = z
  .strictObject(
    {
      host: optionalText("engine.host"),
      context: optionalText("engine.context"),
      tlsCertPath: optionalText("engine.tlsCertPath"),
      tlsVerify: z.boolean({ error: "engine.tlsVerify must be true or false" }).optional(),
      sshIdentityFile: optionalText("engine.sshIdentityFile"),
      sshKnownHostsFile: optionalText("engine.sshKnownHostsFile"),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `engine: unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}; valid keys: host, context, tlsCertPath, tlsVerify, sshIdentityFile, sshKnownHostsFile`
          : 'engine must be an object such as { host: "ssh://user@host" }',
    },
  )
  .optional();

const schemaShape = {
  backend: z.enum(["docker", "gvisor"], { error: `backend must be "docker" or "gvisor"` }).default("docker"),
  image: z.string().min(1).default(DEFAULT_IMAGE),
  cpuLimit: rangeNumber({ name: "cpuLimit", minimum: 0.01, maximum: 256, integer: false }).default(2),
  memoryLimit: sizeField({
    name: "memoryLimit",
    minimum: 32 * 1024 ** 2,
    maximum: 1024 ** 4,
    minimumText: "32M",
    maximumText: "1T",
  }).default("4G"),
  diskLimit: sizeField({
    name: "diskLimit",
    minimum: 1024 ** 2,
    maximum: 1024 ** 4,
    minimumText: "1M",
    maximumText: "1T",
  }).default("1G"),
  pidsLimit: rangeNumber({ name: "pidsLimit", minimum: 16, maximum: 65536, integer: true }).default(256),
  network: networkSchema.default("none"),
  persistent: z.boolean().default(false),
  timeout: rangeNumber({ name: "timeout", minimum: 1, maximum: 86400, integer: false }).default(300),
  workdir: pathInsideWorkspace.default("/workspace"),
  env: z
    .record(z.string(), z.string())
    .superRefine((value, context) => {
      for (const key of Object.keys(value)) {
        if (!environmentName.test(key)) {
          context.addIssue({ code: "custom", message: `env: ${JSON.stringify(key)} is not a variable name` });
        } else if (key === execMarkerName) {
          context.addIssue({ code: "custom", message: `env: ${execMarkerName} is reserved by the sandbox` });
        }
      }
    })
    .default({}),
  /** Unset: each sandbox runs as its own uid (and gid) from `userRange`. Set: every sandbox runs as this one. */
  user: userSchema.optional(),
  userRange: userRangeSchema.default(defaultUserRange),
  allowSudo: z
    .boolean()
    .refine((value) => value === false, {
      message:
        'allowSudo: true is not supported: the sandbox always sets no-new-privileges and drops every capability, so sudo could not work. Use user: "root" if the code must run as root',
    })
    .default(false),
  runtime: z.string().min(1).optional(),
  readOnlyRootfs: z.boolean().default(true),
  maxOutputBytes: positiveCount({ name: "maxOutputBytes", minimum: 1 }).default(1024 * 1024),
  pool: positiveCount({ name: "pool", minimum: 0 }).default(0),
  poolIdleSeconds: rangeNumber({
    name: "poolIdleSeconds",
    minimum: 1,
    maximum: 86400,
    integer: false,
  }).default(300),
  /**
   * The most a warm pool's container takes by copy: a session whose `mountFiles` (the regular files
   * among them) add up to more skips the pool and starts a container of its own with them mounted,
   * on an engine that can mount (files/pool-copy-limit.ts).
   */
  poolCopyLimit: sizeField({
    name: "poolCopyLimit",
    minimum: 0,
    maximum: 1024 ** 4,
    minimumText: "0",
    maximumText: "1T",
  }).default("32M"),
  maxConcurrent: positiveCount({ name: "maxConcurrent", minimum: 1 }).default(defaultMaxConcurrent),
  /** The sum of a manager's live containers' memory limits; unset: this machine's memory (memory-admission.ts). */
  maxTotalMemory: sizeField({
    name: "maxTotalMemory",
    minimum: 32 * 1024 ** 2,
    maximum: 1024 ** 5,
    minimumText: "32M",
    maximumText: "1024T",
  }).optional(),
  engine: engineSchema,
};

const sandboxConfigSchema = z.strictObject(schemaShape);

/** What callers pass: every field optional, camelCase. */
export type SandboxConfigInput = z.input<typeof sandboxConfigSchema>;
/** The parsed settings, defaults filled. */
export type SandboxConfig = z.output<typeof sandboxConfigSchema>;
/** The `network` setting: "none" (the default), "restricted" (package indexes only) or an allow-list of host names. */
export type NetworkSetting = SandboxConfig["network"];

/** The valid option names, in the documented order. */
export const sandboxOptionNames: readonly string[] = Object.keys(schemaShape);

function toCamelCase(name: string): string {
  return name.toLowerCase().replace(/[_-]+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

function editDistance(left: string, right: string): number {
  const previous = Array.from({ length: right.length + 1 }, (_value, index) => index);
  for (let row = 1; row <= left.length; row += 1) {
    let diagonal = previous[0]!;
    previous[0] = row;
    for (let column = 1; column <= right.length; column += 1) {
      const above = previous[column]!;
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      previous[column] = Math.min(above + 1, previous[column - 1]! + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return previous[right.length]!;
}

const networkAliases = new Set([
  "network_mode",
  "networkmode",
  "net",
  "networking",
  "network_access",
  "networkaccess",
]);

/** A hint for one unknown key: "use 'network'", the camelCase name, or "did you mean". */
export function hintForUnknownKey(key: string): string {
  const lower = key.toLowerCase();
  if (networkAliases.has(lower))
    return `'${key}' (use 'network': "none", "full", "restricted" or { allow: [...] })`;
  const camel = toCamelCase(key);
  const exact = sandboxOptionNames.find((name) => name === camel || name.toLowerCase() === lower);
  if (exact) return `'${key}' (use '${exact}': options are camelCase)`;
  let best: { name: string; distance: number } | undefined;
  for (const name of sandboxOptionNames) {
    const distance = editDistance(camel.toLowerCase(), name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (best && best.distance <= Math.max(2, Math.floor(best.name.length / 4))) {
    return `'${key}' (did you mean '${best.name}'?)`;
  }
  return `'${key}'`;
}

/**
 * Parses sandbox settings. Unknown keys, wrong types and out-of-range values throw SandboxConfigError
 * (before any container exists); `{}` and anything without `network` give network "none".
 */
export function parseSandboxConfig(given: unknown = {}): SandboxConfig {
  const input = given ?? {};
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new SandboxConfigError({
      issues: [`the settings must be an object, got ${JSON.stringify(input)}`],
    });
  }
  const unknownKeys = Object.keys(input).filter((key) => !Object.hasOwn(schemaShape, key));
  if (unknownKeys.length > 0) {
    const hints = unknownKeys.map(hintForUnknownKey).join(", ");
    throw new SandboxConfigError({
      issues: [
        `unknown sandbox option${unknownKeys.length > 1 ? "s" : ""} ${hints}. Valid options: ${sandboxOptionNames.join(", ")}.`,
      ],
    });
  }
  const parsed = sandboxConfigSchema.safeParse(input);
  if (!parsed.success) {
    throw new SandboxConfigError({
      issues: parsed.error.issues.map((issue) => {
        const field = issue.path.join(".");
        return issue.message.startsWith(field.split(".")[0] ?? "\u0000")
          ? issue.message
          : `${field}: ${issue.message}`;
      }),
      cause: parsed.error,
    });
  }
  const config = parsed.data;
  if (config.user !== undefined && Object.hasOwn(input, "userRange")) {
    throw new SandboxConfigError({
      issues: [
        `user and userRange exclude each other: user ${JSON.stringify(config.user)} runs every sandbox as one uid, userRange gives each sandbox its own; remove one of them`,
      ],
    });
  }
  if (
    config.maxTotalMemory !== undefined &&
    sizeInBytes(config.maxTotalMemory) < sizeInBytes(config.memoryLimit)
  ) {
    throw new SandboxConfigError({
      issues: [
        `maxTotalMemory (${JSON.stringify(config.maxTotalMemory)}) is under memoryLimit (${JSON.stringify(config.memoryLimit)}): not even one container would fit; raise maxTotalMemory or lower memoryLimit`,
      ],
    });
  }
  return config;
}

/** Bytes of a parsed size field. */
export function sizeInBytes(value: string | number): number {
  if (typeof value === "number") return Math.floor(value);
  const bytes = parseSize(value);
  if (bytes === undefined) throw new SandboxConfigError({ issues: [`not a size: ${JSON.stringify(value)}`] });
  return bytes;
}

/**
 * The numeric uid and gid the code runs as. A sandbox's own config always names its user (the
 * manager fills in the uid it allocated from `userRange`); unset here is a bug of ours.
 */
export function resolveUser(user: string | undefined): { uid: number; gid: number } {
  if (user === undefined) {
    throw new SandboxConfigError({
      issues: [
        "no uid was allocated for this sandbox (user is unset): create sessions through SandboxManager",
      ],
    });
  }
  if (user === "root") return { uid: 0, gid: 0 };
  const [uid, gid] = user.split(":");
  return { uid: Number(uid), gid: Number(gid ?? uid) };
}
