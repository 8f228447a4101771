import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maxConnections } from "../../listener/bounded-server.ts";
import { loginLifetimeMs } from "./desk-login.ts";
import { type DeskListener, listenDesk } from "./desk-server.ts";
import type { DeskSession } from "./desk-session.ts";

// The desk's listener with a session whose agent never builds: a question that gets past the
// checks calls buildAgent (counted), so "the question never ran" is read from the count.

const token = "desk-test-token-0123456789abcdefghijklmnop";
let folder: string;
let desk: DeskListener;
let base: string;
let clock = 0;
let questionsRun = 0;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-server-"));
  await mkdir(join(folder, "out", "run_1"), { recursive: true });
  await writeFile(join(folder, "out", "run_1", "evil.js"), 'fetch("/api/ask")');
  await writeFile(join(folder, "out", "run_1", "chart.svg"), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(folder, "out", "run_1", "report.html"), "<script>fetch('/api/ask')</script>");
  const session = {
    built: undefined,
    files: [],
    buildAgent: async () => {
      questionsRun += 1;
      throw new Error("no sandbox in this test");
    },
    outRoot: join(folder, "out"),
    journalPath: undefined,
    messages: [],
    busy: false,
  } as unknown as DeskSession;
  desk = await listenDesk({ host: "127.0.0.1", port: 0, token, session, now: () => clock });
  base = `http://127.0.0.1:${desk.port}`;
}, 20_000);

afterAll(async () => {
  await desk?.close();
  await rm(folder, { recursive: true, force: true });
});

/** Logs in with the printed address: the cookie, and the page with its own token. */
async function logIn(): Promise<{ cookie: string; pageToken: string }> {
  const login = await fetch(desk.url, { redirect: "manual" });
  const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? "";
  const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
  const pageToken = /<meta name="codeaction-page" content="([^"]+)">/.exec(page)?.[1] ?? "";
  return { cookie, pageToken };
}

function ask(headers: Record<string, string>) {
  return fetch(`${base}/api/ask`, {
    method: "POST",
    headers: { "content-type": "text/plain", ...headers },
    body: JSON.stringify({ question: "How many orders?" }),
  });
}

describe("desk requests that act: exact origin, same-origin fetch, the page's own token (issue 45, High #2)", () => {
  it("runs a question from the desk's own page: the cookie, the page token and its exact origin", async () => {
    const { cookie, pageToken } = await logIn();
    expect(pageToken).toMatch(/^[\w-]{43}$/);
    const before = questionsRun;
    const answer = await ask({
      cookie,
      "x-codeaction-page": pageToken,
      origin: base,
      "sec-fetch-site": "same-origin",
    });
    expect(answer.status).toBe(200);
    await answer.text();
    expect(questionsRun).toBe(before + 1);
  });

  it("refuses an Origin of another port of 127.0.0.1, with the token or the cookie and page token", async () => {
    const { cookie, pageToken } = await logIn();
    const other = `http://127.0.0.1:${desk.port === 65535 ? 1 : desk.port + 1}`;
    const before = questionsRun;
    const withBearer = await ask({ authorization: `Bearer ${token}`, origin: other });
    expect(withBearer.status).toBe(403);
    const withCookie = await ask({ cookie, "x-codeaction-page": pageToken, origin: other });
    expect(withCookie.status).toBe(403);
    // Another scheme, or a sandboxed document's "null", is another origin too.
    expect(
      (await ask({ cookie, "x-codeaction-page": pageToken, origin: `https://127.0.0.1:${desk.port}` }))
        .status,
    ).toBe(403);
    expect((await ask({ cookie, "x-codeaction-page": pageToken, origin: "null" })).status).toBe(403);
    // Host naming another port (fetch cannot set Host: a raw request).
    const socket = await openSocket();
    const wrongHost = answer(socket);
    socket.write(
      `GET /api/files HTTP/1.1\r\nHost: 127.0.0.1:${desk.port + 1}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    expect(await wrongHost).toBe(403);
    socket.destroy();
    expect(questionsRun).toBe(before);
  });

  it("refuses what the browser marks as from another site or port (Sec-Fetch-Site), and the cookie without the page token", async () => {
    const { cookie, pageToken } = await logIn();
    const before = questionsRun;
    const sameSite = await ask({ cookie, "x-codeaction-page": pageToken, "sec-fetch-site": "same-site" });
    expect(sameSite.status).toBe(403);
    expect(((await sameSite.json()) as { error: string }).error).toMatch(
      /another site or port \(Sec-Fetch-Site: same-site\)/,
    );
    expect((await ask({ cookie, "sec-fetch-site": "same-origin" })).status).toBe(401);
    expect((await ask({ cookie, "sec-fetch-site": "none" })).status).toBe(403);
    expect(questionsRun).toBe(before);
    // A file of a run from another port's <img>: refused too.
    const image = await fetch(`${base}/out/run_1/chart.svg`, {
      headers: { cookie, "sec-fetch-site": "same-site" },
    });
    expect(image.status).toBe(403);
  });
});

describe("files a run wrote are served inert (issue 45, High #1)", () => {
  it("serves a script or a page as an attachment of type application/octet-stream in a CSP sandbox, never sniffed", async () => {
    const { cookie } = await logIn();
    const script = await fetch(`${base}/out/run_1/evil.js`, { headers: { cookie } });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("application/octet-stream");
    expect(script.headers.get("content-security-policy")).toMatch(/^sandbox; default-src 'none'/);
    expect(script.headers.get("x-content-type-options")).toBe("nosniff");
    expect(script.headers.get("content-disposition")).toBe('attachment; filename="evil.js"');
    const page = await fetch(`${base}/out/run_1/report.html`, { headers: { cookie } });
    expect(page.headers.get("content-type")).toBe("application/octet-stream");
    expect(page.headers.get("content-disposition")).toBe('attachment; filename="report.html"');
    const chart = await fetch(`${base}/out/run_1/chart.svg`, { headers: { cookie } });
    expect(chart.headers.get("content-type")).toBe("image/svg+xml");
    expect(chart.headers.get("content-disposition")).toBe('attachment; filename="chart.svg"');
    expect(chart.headers.get("content-security-policy")).toMatch(/^sandbox; default-src 'none'/);
  });
});

describe("desk --open logs in with a single-use, short-lived nonce (issue 45, Medium #8)", () => {
  it("carries no token; the nonce works once, then is refused", async () => {
    const address = desk.loginUrl();
    expect(address).not.toContain(token);
    expect(new URL(address).searchParams.get("login")).toMatch(/^[\w-]{32}$/);
    const first = await fetch(address, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("set-cookie")).toContain(`codeaction_desk_${desk.port}=${token}; HttpOnly`);
    const again = await fetch(address, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(((await again.json()) as { error: string }).error).toMatch(/used already or is over 60 s old/);
  });

  it("refuses a nonce past its lifetime, and one it never issued", async () => {
    const address = desk.loginUrl();
    clock += loginLifetimeMs + 1;
    expect((await fetch(address, { redirect: "manual" })).status).toBe(401);
    const fresh = desk.loginUrl();
    clock += loginLifetimeMs;
    expect((await fetch(fresh, { redirect: "manual" })).status).toBe(303);
    expect((await fetch(`${base}/?login=made-up`, { redirect: "manual" })).status).toBe(401);
  });
});

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(desk.port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** The status of the answer on `socket`, or "closed" when the server closes it without one. */
function answer(socket: Socket): Promise<number | "closed"> {
  return new Promise((resolve) => {
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received += chunk;
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (status) resolve(Number(status[1]));
    });
    socket.on("error", () => undefined);
    socket.once("close", () => resolve("closed"));
  });
}

async function getFiles(): Promise<number | "closed"> {
  const socket = await openSocket();
  const answered = answer(socket);
  socket.write(
    `GET /api/files HTTP/1.1\r\nHost: 127.0.0.1:${desk.port}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
  );
  const status = await answered;
  socket.destroy();
  return status;
}

describe("the desk holds at most 64 connections (issue 45, Low)", () => {
  it("closes one more connection at once while 64 half-sent requests are held, and serves again when one goes", async () => {
    const held: Socket[] = [];
    try {
      for (let index = 0; index < maxConnections; index += 1) {
        const socket = await openSocket();
        socket.on("error", () => undefined);
        socket.write(`POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1:${desk.port}\r\n`);
        held.push(socket);
      }
      expect(await getFiles()).toBe("closed");
      held.pop()?.destroy();
      // The server notices the close on its own time: try until a new connection is served.
      await expect.poll(getFiles, { timeout: 15_000, interval: 100 }).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
