import type * as OpenTelemetry from "@opentelemetry/api";

// @opentelemetry/api is an optional peer dependency: it is loaded once, on demand, and a missing
// package or a process with no tracer provider registered means no tracing at all. Without a
// provider no tracer is asked for, so no span object (not even a non-recording one) is created.

export type OtelApi = typeof OpenTelemetry;
export type Span = OpenTelemetry.Span;
export type Context = OpenTelemetry.Context;
export type Tracer = OpenTelemetry.Tracer;

/** The instrumentation scope the spans are reported under. */
export const instrumentationName = "@codeaction/core";

let loading: Promise<OtelApi | undefined> | undefined;

/** The OpenTelemetry API, when the package is installed; undefined otherwise. */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  // A variable specifier keeps bundlers from inlining a package that may not be installed.
  const specifier = "@opentelemetry/api";
  loading ??= import(specifier).then(
    (module: OtelApi & { default?: OtelApi }) => (module.trace ? module : module.default),
    () => undefined,
  );
  return loading;
}

/** The API and a tracer, when a tracer provider is registered; undefined (and nothing created) otherwise. */
export async function findTracer(): Promise<{ api: OtelApi; tracer: Tracer } | undefined> {
  const api = await loadOtelApi();
  if (!api) return undefined;
  const provider = api.trace.getTracerProvider() as OpenTelemetry.TracerProvider & {
    getDelegateTracer?: (name: string) => Tracer | undefined;
  };
  // The API's global is a proxy: it has a delegate only once an SDK registered one.
  const tracer =
    typeof provider.getDelegateTracer === "function"
      ? provider.getDelegateTracer(instrumentationName)
      : provider.getTracer(instrumentationName);
  return tracer ? { api, tracer } : undefined;
}
