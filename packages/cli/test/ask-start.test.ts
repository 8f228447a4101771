import { fileURLToPath } from "node:url";
import { build, type Metafile, type Plugin } from "esbuild";
import { expect, test } from "vitest";

// `ask` starts its sandbox's container in a worker thread before LangChain, the Docker client and the
// data files' parsers load (commands/ask.ts; the rest is ask-session.ts, imported after the start):
// a module `ask.ts` imports statically is loaded, and its top-level code run, before ask's own code.
const root = fileURLToPath(new URL("../../..", import.meta.url));
const askModule = "packages/cli/src/commands/ask.ts";

/** Dynamic imports are left out of the build: what they load comes later, when they are called. */
const withoutDynamicImports: Plugin = {
  name: "without-dynamic-imports",
  setup(built) {
    built.onResolve({ filter: /.*/ }, (args) =>
      args.kind === "dynamic-import" ? { path: args.path, external: true } : undefined,
    );
  },
};

/** Every module reached from `entry` by static imports alone (dynamic ones load later, when called). */
function staticClosure(metafile: Metafile, entry: string): Set<string> {
  const reached = new Set<string>([entry]);
  const pending = [entry];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const imported of metafile.inputs[next]?.imports ?? []) {
      if (imported.kind !== "import-statement" || imported.external || reached.has(imported.path)) continue;
      reached.add(imported.path);
      pending.push(imported.path);
    }
  }
  return reached;
}

test("ask's own module loads none of LangChain, the Docker client, the agent's session or a data file parser before its sandbox starts", async () => {
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [askModule],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    outdir: "/nonexistent",
    write: false,
    metafile: true,
    external: ["cpu-features", "*.node"],
    plugins: [withoutDynamicImports],
    logLevel: "silent",
  });
  const loaded = [...staticClosure(metafile, askModule)];
  // The closure is walked for real: ask's arguments and the prelaunch are in it.
  expect(loaded).toContain("packages/cli/src/commands/ask-arguments.ts");
  expect(loaded).toContain("packages/sandbox/src/prelaunch/prelaunch.ts");
  const heavy = loaded.filter((path) =>
    /node_modules\/.*(@langchain|@modelcontextprotocol|dockerode|docker-modem|ssh2|pino|zod|hyparquet|read-excel-file|csv-parse)\/|packages\/core\/src\/index\.ts|packages\/sandbox\/src\/index\.ts|packages\/cli\/src\/session\/agent-session\.ts/.test(
      path,
    ),
  );
  expect(heavy).toEqual([]);
});
