// `@codeaction/sandbox/images`: the image names alone, without loading Docker's client.
export { DATA_IMAGE, DEFAULT_IMAGE } from "./names.ts";
