#!/usr/bin/env node
// The `codeaction` command. Node 22 runs the TypeScript sources directly (type stripping).
import { run } from "../src/main.ts";

run(process.argv.slice(2));
