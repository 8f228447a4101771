// The Python the packages ship (the bridge's relay modules, the program's bootstrap, the tools
// module, the output collector) is linted with pyflakes: undefined names, unused imports, names
// redefined. Each relay module must pass on its own (python-sources.ts joins them for the container).
// pyflakes comes from Debian's python3-pyflakes (scripts/setup-tests.sh installs it).
// Usage: node scripts/check-python.ts
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const repositoryRoot = fileURLToPath(new URL("../", import.meta.url));
const files = execFileSync("git", ["ls-files", "packages/*/src/**.py", "packages/*/src/*.py"], {
  cwd: repositoryRoot,
  encoding: "utf8",
})
  .split("\n")
  .filter(Boolean);
const python = "/usr/bin/python3";
const lint = spawnSync(python, ["-m", "pyflakes", ...files], { cwd: repositoryRoot, encoding: "utf8" });
if (lint.error || /No module named pyflakes/.test(lint.stderr)) {
  console.error(
    `pyflakes is missing (${python} -m pyflakes): install Debian's python3-pyflakes (bash scripts/setup-tests.sh does)`,
  );
  process.exit(1);
}
if (lint.status !== 0) {
  process.stderr.write(lint.stdout + lint.stderr);
  console.error(`pyflakes found the problems above in ${files.length} Python files`);
  process.exit(1);
}
console.log(`pyflakes: ${files.length} Python files clean`);
