import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One run as LangSmith's ingest API received it (creates and updates merged by id). */
export type CapturedRun = {
  id: string;
  name?: string;
  run_type?: string;
  parent_run_id?: string;
  trace_id?: string;
  /** LangSmith's ordering key: start time and id of every ancestor, so it sorts in start order. */
  dotted_order?: string;
  tags?: string[];
  inputs?: unknown;
  outputs?: unknown;
  error?: string;
  end_time?: unknown;
};

const maximumBodyBytes = 8 * 1024 * 1024;

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maximumBodyBytes) throw new Error("capture body too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

/**
 * A loopback stand-in for LangSmith's ingest API, as its JS client uses it: `GET /info` (told to
 * use the JSON batch endpoint), `POST /runs/batch` with `{ post, patch }`, and the single-run
 * `POST /runs` and `PATCH /runs/:id`. Keeps every run by id; anything else is a 404 it records.
 */
export async function startLangSmithCapture() {
  const runs = new Map<string, CapturedRun>();
  const unexpected: string[] = [];
  const merge = (run: CapturedRun) => runs.set(run.id, { ...runs.get(run.id), ...run });
  const server = createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0] ?? "";
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    void (async () => {
      if (request.method === "GET" && path === "/info") {
        return reply(200, { version: "capture", batch_ingest_config: { use_multipart_endpoint: false } });
      }
      const body = (await readJson(request)) as Record<string, unknown> | undefined;
      if (request.method === "POST" && path === "/runs/batch") {
        for (const run of [
          ...((body?.post as CapturedRun[]) ?? []),
          ...((body?.patch as CapturedRun[]) ?? []),
        ])
          merge(run);
        return reply(202, {});
      }
      if (request.method === "POST" && path === "/runs") {
        merge(body as CapturedRun);
        return reply(202, {});
      }
      const patch = /^\/runs\/([^/]+)$/.exec(path);
      if (request.method === "PATCH" && patch?.[1]) {
        merge({ ...(body as CapturedRun), id: patch[1] });
        return reply(202, {});
      }
      unexpected.push(`${request.method} ${path}`);
      return reply(404, { detail: "not captured" });
    })().catch((error: unknown) => reply(500, { detail: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    runs,
    unexpected,
    /** The runs whose parent is `parent` (undefined: the roots), in start order. */
    children(parent: string | undefined): CapturedRun[] {
      return [...runs.values()]
        .filter((run) => run.parent_run_id === parent)
        .sort((first, second) => String(first.dotted_order).localeCompare(String(second.dotted_order)));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
