import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectServers, parseServerCommand, type ToolSpec } from "@codeaction/core";

// The reference MCP servers from npm (devDependencies of this package), as `--server` command
// lines a user would write: each runs as its own process over stdio.
const modules = fileURLToPath(new URL("../node_modules/@modelcontextprotocol/", import.meta.url));

function quote(path: string): string {
  return `'${path.replaceAll("'", "'\\''")}'`;
}

/** @modelcontextprotocol/server-everything: echo, get-sum, get-structured-content (outputSchema), ... */
export const everythingServer = `node ${quote(`${modules}server-everything/dist/index.js`)} stdio`;

/** @modelcontextprotocol/server-memory, keeping its knowledge graph in `file`. */
export function memoryServer(file: string): string {
  return `MEMORY_FILE_PATH=${quote(file)} node ${quote(`${modules}server-memory/dist/index.js`)}`;
}

/** @modelcontextprotocol/server-filesystem, allowed to touch `folder` only. */
export function filesystemServer(folder: string): string {
  return `node ${quote(`${modules}server-filesystem/dist/index.js`)} ${quote(folder)}`;
}

/**
 * The memory and filesystem servers connected as `--server` flags would be, each keeping its files
 * in a fresh scratch folder; `close()` stops them and removes the folder.
 */
export async function connectMemoryAndFilesystem(): Promise<{
  tools: ToolSpec[];
  close: () => Promise<void>;
}> {
  const scratch = await mkdtemp(join(tmpdir(), "reference-servers-"));
  const servers = await connectServers({
    memory: parseServerCommand(memoryServer(join(scratch, "memory.jsonl"))),
    filesystem: parseServerCommand(filesystemServer(scratch)),
  }).catch(async (error: unknown) => {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  });
  return {
    tools: servers.tools,
    close: async () => {
      await servers.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
