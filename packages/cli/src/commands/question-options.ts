import { DATA_IMAGE } from "@codeaction/sandbox/images";

/**
 * What the program's interpreter imports while it waits for the program (`codeAction.preimport`):
 * pandas on the data image (the prompt points programs at it for /workspace/data), whose import
 * then leaves the run.
 */
export function preimportFor(image: string | undefined): string[] {
  return image === DATA_IMAGE ? ["pandas"] : [];
}

/** The options `ask` and `chat` share: the data, the servers, the model, the sandbox and the output. */
export const questionOptions = {
  csv: { type: "string", multiple: true },
  file: { type: "string", multiple: true },
  quiet: { type: "boolean" },
  server: { type: "string", multiple: true },
  model: { type: "string" },
  replay: { type: "string" },
  image: { type: "string" },
  data: { type: "boolean" },
  format: { type: "string" },
  out: { type: "string" },
} as const;
