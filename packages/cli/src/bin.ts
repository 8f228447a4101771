#!/usr/bin/env node
// The `codeaction` command of the installed package (the repository runs bin/codeaction.js on the sources).
import * as nodeModule from "node:module";

// V8's compiled code of the modules is kept on disk (Node's compile cache, in the temp folder), so
// the next command compiles less of LangChain and the rest (NODE_DISABLE_COMPILE_CACHE=1 turns it
// off). Enabled before anything else loads: main.ts's imports come after it.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// Compiled, the command runs its bundle (scripts/bundle-cli.ts: a few files instead of ~850 for
// Node to resolve and load); from the sources, main.ts itself.
const entry = import.meta.url.endsWith(".ts") ? "./main.ts" : "./bundle/main.js";
const { run } = (await import(entry)) as typeof import("./main.ts");
run(process.argv.slice(2));
