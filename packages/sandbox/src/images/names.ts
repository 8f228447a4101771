// The sandbox image names, in a module with no imports: the CLI reads them for its help text before
// it loads the sandbox (and Docker's client) through `@codeaction/sandbox/images`.

/** The sandbox image every session uses by default: Python 3.11, standard library only. */
export const DEFAULT_IMAGE = "codeaction/python:3.11";
/** The data image: the sandbox image plus numpy and pandas (`buildImage({ flavour: "data" })`). */
export const DATA_IMAGE = "codeaction/python:3.11-data";
