import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeskProcess, startDesk } from "./desk-process.ts";

// `codeaction desk --open` as a process, with an xdg-open of the test's own first on PATH that
// writes down its command line: what another local user could read in /proc. No Docker engine at
// the address given: the desk opens anyway, and nothing here needs one.

let folder: string;
let desk: DeskProcess;
const opened = () => readFile(join(folder, "xdg-open.args"), "utf8").catch(() => "");

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-open-"));
  const bin = join(folder, "bin");
  await mkdir(bin);
  await writeFile(
    join(bin, "xdg-open"),
    `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(join(folder, "xdg-open.args"))}\n`,
  );
  await chmod(join(bin, "xdg-open"), 0o755);
  desk = await startDesk({
    cwd: folder,
    args: ["--open", "--no-journal"],
    replies: [],
    env: {
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      DOCKER_HOST: `unix://${join(folder, "no-engine.sock")}`,
    },
  });
}, 20_000);

afterAll(async () => {
  await desk?.stop();
  await rm(folder, { recursive: true, force: true });
});

describe("codeaction desk --open (issue 45, Medium #8)", () => {
  it("opens an address with a single-use login nonce, never the token; the nonce logs in once", async () => {
    await expect.poll(opened).not.toBe("");
    const address = (await opened()).trim();
    expect(desk.token.length).toBeGreaterThan(20);
    expect(address).not.toContain(desk.token);
    expect(address).not.toContain("token=");
    expect(address).toMatch(new RegExp(`^${desk.base}/\\?login=[\\w-]{32}$`));
    const first = await fetch(address, { redirect: "manual" });
    expect(first.status).toBe(303);
    const cookie = first.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect(cookie).toBe(`codeaction_desk_${new URL(desk.base).port}=${desk.token}`);
    expect((await fetch(`${desk.base}/`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(address, { redirect: "manual" })).status).toBe(401);
  });
});
