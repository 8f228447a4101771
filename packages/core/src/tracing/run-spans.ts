import type { Context, OtelApi, Span, Tracer } from "./otel.ts";

// The spans of one run, after the OpenTelemetry GenAI semantic conventions: invoke_agent around
// the run, chat per model call, execute_program per attempt, execute_tool per tool call (a child
// of its program), and MCP calls under their tool. Every span carries gen_ai.operation.name.

export type Attributes = Record<string, string | number | boolean | string[] | undefined>;

/** What the spans may hold beyond names and figures: content only on opt-in, bounded. */
export type SpanContentOptions = {
  /** Record programs, tool arguments and tool results (default false). */
  recordContent: boolean;
  /** Characters kept of each recorded text (default 4000). */
  maxContentChars: number;
};

/** One open span: attributes to add, then its end (ok, or an error recorded on it). */
export type OpenSpan = {
  /** The span's context: children started under it. */
  context: Context;
  set(attributes: Attributes): void;
  end(error?: unknown): void;
};

export class RunSpans {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;
  readonly #content: SpanContentOptions;
  readonly agent: OpenSpan;

  constructor(options: {
    api: OtelApi;
    tracer: Tracer;
    content: SpanContentOptions;
    attributes: Attributes;
  }) {
    this.#api = options.api;
    this.#tracer = options.tracer;
    this.#content = options.content;
    // The caller's active span (around invoke) is the parent.
    this.agent = this.start("invoke_agent codeaction", this.#api.context.active(), options.attributes);
  }

  /** A span named `name` under `parent` (an OpenSpan's context). */
  start(
    name: string,
    parent: Context,
    attributes: Attributes,
    kind: "client" | "internal" = "internal",
  ): OpenSpan {
    const api = this.#api;
    const span = this.#tracer.startSpan(
      name,
      {
        kind: kind === "client" ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL,
        attributes: defined(attributes),
      },
      parent,
    );
    return {
      context: api.trace.setSpan(parent, span),
      set: (more) => span.setAttributes(defined(more)),
      end: (error) => endSpan(api, span, error, this.#content),
    };
  }

  /** Runs `work` with `span` as the active span (for instrumentation inside a tool). */
  within<T>(span: OpenSpan, work: () => Promise<T>): Promise<T> {
    return this.#api.context.with(span.context, work);
  }

  /** `text` when content is recorded, cut to the bound; undefined otherwise. */
  content(text: () => string): string | undefined {
    if (!this.#content.recordContent) return undefined;
    const value = text();
    const limit = this.#content.maxContentChars;
    return value.length > limit
      ? `${value.slice(0, limit)}… [${value.length - limit} characters cut]`
      : value;
  }
}

/**
 * Ends a span, ok or failed. A failure's message and stack are content (a tool's error names its
 * arguments, a run's names the program's last output): without `recordContent` the span carries
 * the error's type and code only (`error.type`, an `exception` event with `exception.type`, the
 * status message the type); with it, the exception as recorded by the SDK, its message bounded.
 */
function endSpan(api: OtelApi, span: Span, error: unknown, content: SpanContentOptions): void {
  if (error === undefined) {
    span.setStatus({ code: api.SpanStatusCode.OK });
    span.end();
    return;
  }
  const exception = error instanceof Error ? error : new Error(String(error));
  const type = (exception as { code?: unknown }).code?.toString() ?? exception.name;
  span.setAttribute("error.type", type);
  if (content.recordContent) {
    span.recordException(exception);
    span.setStatus({
      code: api.SpanStatusCode.ERROR,
      message: exception.message.slice(0, content.maxContentChars),
    });
  } else {
    span.addEvent("exception", { "exception.type": exception.name });
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: type });
  }
  span.end();
}

function defined(attributes: Attributes): Record<string, string | number | boolean | string[]> {
  const kept: Record<string, string | number | boolean | string[]> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) kept[key] = value;
  return kept;
}
