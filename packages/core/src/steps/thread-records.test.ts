import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson, hmacHex } from "../durable/canonical-json.ts";
import { ThreadError } from "../errors/thread-error.ts";
import type { DataFile } from "../program/data-files.ts";
import { createFileThreadStore } from "./file-thread-store.ts";
import { StepSpace } from "./step-space.ts";
import { type ToolDigest, threadStoreAccess } from "./thread-records.ts";

// The thread store as an attacker who can write its folder sees it: every changed, moved, linked or
// oversized record is refused before anything runs, and changed tools or data files start afresh.

const secret = "0123456789abcdef0123456789abcdef";
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function setUp(options: { toolsDigest?: string; data?: string } = {}) {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-thread-store-"));
  folders.push(folder);
  const dataPath = join(folder, "data.csv");
  await writeFile(dataPath, options.data ?? "a,b\n1,2\n");
  const store = createFileThreadStore(join(folder, "threads"));
  const access = (toolsDigest = options.toolsDigest ?? "tools-1") =>
    threadStoreAccess(store, {
      secret,
      tools: [{ name: "lookup", sha256: toolsDigest }],
      dataFiles: [{ path: dataPath, name: "data.csv", size: 8 }],
    });
  const space = StepSpace.fromHistory({
    seed: "seed-1",
    summary: "total: int 12",
    history: [{ program: "total = load()", exitCode: 0, callLog: [] }],
  });
  await access().save("T", space);
  const [file] = await readdir(join(folder, "threads"));
  return { folder, dataPath, access, path: join(folder, "threads", file!) };
}

async function refusal(promise: Promise<unknown>): Promise<ThreadError> {
  const error = await promise.catch((caught: unknown) => caught);
  expect(ThreadError.isInstance(error), String(error)).toBe(true);
  expect((error as ThreadError).reason).toBe("history-refused");
  return error as ThreadError;
}

describe("the signed thread store", () => {
  it("gives back what it kept", async () => {
    const { access } = await setUp();
    const space = await access().load("T");
    expect(space?.history.map((entry) => entry.program)).toEqual(["total = load()"]);
    expect(space?.seed).toBe("seed-1");
    expect(space?.lost).toBeUndefined();
    expect(await access().load("other")).toBeUndefined();
  });

  it("refuses a record changed by one byte, naming the signature", async () => {
    const { access, path } = await setUp();
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace("total = load()", "total = load(!"));
    expect((await refusal(access().load("T"))).message).toContain("signature does not match");
  });

  it("refuses another thread's record copied over this one's", async () => {
    const { access, path } = await setUp();
    await access().save("U", StepSpace.fromHistory({ seed: "s", history: [] }));
    const other = (await readdir(join(path, ".."))).find((name) => !path.endsWith(name))!;
    await writeFile(path, await readFile(join(path, "..", other), "utf8"));
    expect((await refusal(access().load("T"))).message).toContain('history of thread "U"');
  });

  it("refuses a record replaced by a link, a FIFO, or one over 64 MiB, without following or blocking", async () => {
    const { access, path, folder } = await setUp();
    const target = join(folder, "elsewhere.json");
    await writeFile(target, await readFile(path, "utf8"));
    await rm(path);
    await symlink(target, path);
    expect((await refusal(access().load("T"))).message).toContain("symbolic link");
    await rm(path);
    execFileSync("mkfifo", [path]);
    expect((await refusal(access().load("T"))).message).toContain("not a regular file");
    await rm(path);
    await writeFile(path, Buffer.alloc(64 * 1024 * 1024 + 1, 32));
    expect((await refusal(access().load("T"))).message).toContain("over 67108864");
  });

  it("refuses a record signed with another key", async () => {
    const { access, path, folder } = await setUp();
    const other = threadStoreAccess(createFileThreadStore(join(folder, "threads")), {
      secret: "another-secret-of-32-characters!",
      tools: [{ name: "lookup", sha256: "tools-1" }],
      dataFiles: [],
    });
    await other.save("T", StepSpace.fromHistory({ seed: "s", history: [] }));
    expect(await readFile(path, "utf8")).toContain('"seed":"s"');
    await refusal(access().load("T"));
  });

  it("starts afresh, saying why, when the tools or a data file changed since", async () => {
    const { access, dataPath } = await setUp();
    const tools = await access("tools-2").load("T");
    expect(tools?.history).toEqual([]);
    expect(tools?.lost).toBe("the tool lookup changed since its programs ran");
    await writeFile(dataPath, "a,b\n1,3\n");
    const data = await access().load("T");
    expect(data?.history).toEqual([]);
    expect(data?.lost).toBe("the data file data.csv changed since its programs ran");
  });

  it("restores when a tool and a data file were added since (an upload), and starts afresh when one is gone", async () => {
    const { folder, dataPath } = await setUp();
    const addedPath = join(folder, "returns.csv");
    await writeFile(addedPath, "id\n1\n");
    const store = createFileThreadStore(join(folder, "threads"));
    const data = { path: dataPath, name: "data.csv", size: 8 };
    const returns = { path: addedPath, name: "returns.csv", size: 5 };
    const lookup = { name: "lookup", sha256: "tools-1" };
    const load = (tools: ToolDigest[], dataFiles: DataFile[]) =>
      threadStoreAccess(store, { secret, tools, dataFiles }).load("T");
    const added = await load([lookup, { name: "load_returns", sha256: "r" }], [data, returns]);
    expect(added?.lost).toBeUndefined();
    expect(added?.history.map((entry) => entry.program)).toEqual(["total = load()"]);
    const fileGone = await load([lookup], [returns]);
    expect(fileGone?.history).toEqual([]);
    expect(fileGone?.lost).toBe("the data file data.csv is gone since its programs ran");
    const toolGone = await load([], [data]);
    expect(toolGone?.history).toEqual([]);
    expect(toolGone?.lost).toBe("the tool lookup is gone since its programs ran");
  });

  it("starts afresh, saying why, from a history stored by the earlier version (one digest for all tools)", async () => {
    const { folder, dataPath } = await setUp();
    const store = createFileThreadStore(join(folder, "threads"));
    const content = {
      format: "codeaction.thread",
      version: 1,
      threadId: "old",
      seed: "s",
      summary: "",
      history: [{ program: "x = 1", exitCode: 0, callLog: [] }],
      toolsDigest: "all-tools",
      dataFiles: [],
    };
    await store.write(
      "old",
      JSON.stringify({ ...content, signature: hmacHex(secret, canonicalJson(content)) }),
    );
    const data = { path: dataPath, name: "data.csv", size: 8 };
    const old = await threadStoreAccess(store, { secret, tools: [], dataFiles: [data] }).load("old");
    expect(old?.history).toEqual([]);
    expect(old?.lost).toBe("its history was stored by an earlier version of codeaction");
  });
});
