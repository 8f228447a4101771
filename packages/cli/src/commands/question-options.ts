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
