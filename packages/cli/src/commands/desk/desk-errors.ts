import { DATA_IMAGE, DEFAULT_IMAGE } from "@codeaction/sandbox/images";
import type { CsvTable } from "../../data-files/csv-table.ts";
import type { ModelCallSettings } from "../../model-failure.ts";
import { describeFailedPrograms } from "./desk-failure.ts";
import { describeModelFailure } from "./desk-model-failure.ts";

/**
 * A failure as the page shows it: the message and, for the ones a user can act on, the fix; for a
 * failed program, the line that names its error.
 */
export type DescribedError = { message: string; fix?: string; errorLine?: string };

/**
 * The message of a failure and its fix, by the `code` of the error or of one of its causes: Docker
 * not running, the sandbox image missing, a data file the desk cannot read, a program that failed
 * in every attempt, a failed model call (one message per cause, with `modelCall`: where the calls
 * went, their tries and timeout). Anything else: the message alone.
 */
export function describeError(
  error: unknown,
  tables: CsvTable[] = [],
  modelCall?: ModelCallSettings,
): DescribedError {
  const modelFailure = modelCall ? describeModelFailure(error, modelCall) : undefined;
  if (modelFailure) return modelFailure;
  const message = error instanceof Error ? error.message : String(error);
  const found = codedCause(error);
  if (found?.code === "attempts-exhausted") return describeFailedPrograms(found, tables);
  const fix = found ? fixFor(found) : undefined;
  if (fix) return { message, fix };
  if (/connect ENOENT|docker\.sock|Cannot connect to the Docker daemon/i.test(message)) {
    return { message, fix: startDocker };
  }
  return { message };
}

/** Docker not answering or the image missing: the desk starts anyway, and each question says so until it is fixed. */
export function isSandboxProblem(error: unknown): boolean {
  const code = codedCause(error)?.code;
  return code === "docker-unavailable" || code === "image-missing";
}

const startDocker =
  "Start Docker (the desk runs each program in a Docker sandbox), or point DOCKER_HOST at a running engine; then ask again.";

type Coded = { code: string; image?: unknown; attempts?: { stdout?: unknown; stderr?: unknown }[] };

/** The first error along the cause chain (at most 8 deep) whose code the desk has a fix for. */
function codedCause(error: unknown): Coded | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    const { code, image, attempts } = current as Error & Omit<Coded, "code"> & { code?: unknown };
    if (typeof code === "string" && fixFor({ code, image })) return { code, image, attempts };
    current = current.cause;
  }
  return undefined;
}

function fixFor(error: Coded): string | undefined {
  switch (error.code) {
    case "docker-unavailable":
      return startDocker;
    case "image-missing": {
      const image = typeof error.image === "string" ? error.image : DEFAULT_IMAGE;
      if (image === DEFAULT_IMAGE) return "Build the sandbox image: codeaction image build; then ask again.";
      if (image === DATA_IMAGE) return "Build the data image: codeaction image build --data; then ask again.";
      return `Build it: codeaction image build --tag ${image}; or restart the desk with --image naming an image you have (docker images lists them).`;
    }
    case "attempts-exhausted":
      return "Every program the model wrote failed: read its output on this card (Output), then ask again saying more (the file, the columns, the result you want).";
    case "csv-input":
      return "Fix the file (or save it in another format the desk reads), then drop it again.";
    default:
      return undefined;
  }
}
