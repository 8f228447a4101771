import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach } from "vitest";

// The official OpenTelemetry SDK registered globally for one test file: a provider exporting each
// span as it ends, the async-hooks context manager, both set before the file's tests and cleared after.

/** Registers a provider around the file's tests; `makeExporter` is called in `beforeAll`. */
export function registerTracerProvider(makeExporter: () => SpanExporter | Promise<SpanExporter>): {
  forceFlush(): Promise<void>;
} {
  let provider: BasicTracerProvider | undefined;
  beforeAll(async () => {
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(await makeExporter())] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider?.shutdown();
    trace.disable();
    context.disable();
  });
  return { forceFlush: async () => provider?.forceFlush() };
}

/** Records the file's spans in memory, emptied before each test. */
export function recordSpansInMemory(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  registerTracerProvider(() => exporter);
  beforeEach(() => exporter.reset());
  return exporter;
}

/** The spans whose parent is `parent`, in start order. */
export function childrenOf(spans: ReadableSpan[], parent: ReadableSpan | undefined): ReadableSpan[] {
  return spans
    .filter((span) => span.parentSpanContext?.spanId === parent?.spanContext().spanId)
    .sort((left, right) => left.startTime[0] - right.startTime[0] || left.startTime[1] - right.startTime[1]);
}
