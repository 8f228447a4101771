#!/usr/bin/env node
// The `codeaction` command of the installed package (the repository runs bin/codeaction.js on the sources).
import { run } from "./main.ts";

run(process.argv.slice(2));
