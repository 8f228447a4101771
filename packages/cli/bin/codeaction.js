#!/usr/bin/env node
// The `codeaction` command in this repository: Node 22 runs the TypeScript sources directly (type
// stripping). The published package runs the compiled dist/bin.js instead (publishConfig.bin).
import "../src/bin.ts";
