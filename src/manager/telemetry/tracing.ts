import { createRequire } from 'node:module';
import type { McpError } from '../../errors.js';

// Names from the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai,
// docs/gen-ai/mcp.md): span `{mcp.method.name} {target}`, kind CLIENT, and the
// `mcp.client.operation.duration` histogram in seconds. `error.type` is the JSON-RPC error
// code when the server sent one, `tool_error` for a tool's own failure (`isError`), else
// our error code. The conventions name no attribute for which configured server a span is
// about, so that one is ours, outside their namespaces.
const OPERATION_DURATION = 'mcp.client.operation.duration';
const SERVER_NAME = 'lazy_mcp.server.name';
/** `error.type` of a tool result with `isError: true`. */
export const TOOL_ERROR = 'tool_error';

/** The parts of `@opentelemetry/api` used here, so the package stays an optional peer. */
interface OtelApi {
  trace: { getTracer(name: string, version?: string): OtelTracer; getTracerProvider(): object };
  metrics: { getMeter(name: string, version?: string): OtelMeter; getMeterProvider(): object };
  SpanKind: { CLIENT: number; INTERNAL: number };
  SpanStatusCode: { ERROR: number };
}
interface OtelTracer {
  startSpan(name: string, options: { kind: number; attributes: Record<string, string | number> }): OtelSpan;
}
interface OtelSpan {
  setAttribute(key: string, value: string | number): void;
  setStatus(status: { code: number; message?: string }): void;
  end(): void;
}
interface OtelMeter {
  createHistogram(name: string, options: { unit: string; description: string }): { record(value: number, attributes: Record<string, string | number>): void };
}

/** What one request or start hands back: end it once, with the error when it failed (or `tool_error`). */
export interface TraceHandle {
  end(error?: McpError | typeof TOOL_ERROR): void;
}

/** What a request or start gets when no provider listens. */
const UNHEARD: TraceHandle = { end: () => undefined };

export interface RequestTrace {
  server: string;
  method: string;
  /** The tool or prompt name, which becomes the span's target. */
  target?: string;
  transport: 'stdio' | 'http' | 'sse' | 'memory';
  protocolVersion?: string;
  resourceUri?: string;
}

/** Where `@opentelemetry/api` 1.x keeps what is registered with it (providers, context manager). */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/** The API and what this package made with it, once something listens. */
interface Otel {
  api: OtelApi;
  tracer: OtelTracer;
  duration: ReturnType<OtelMeter['createHistogram']>;
}

/**
 * Spans and the duration metric for requests and starts, when `@opentelemetry/api` is
 * installed; otherwise `undefined` everywhere, so the request path pays one branch. The
 * API itself is loaded only once a provider has been registered with it (which puts the
 * API's global in place): a process that traces nothing never loads it.
 */
export class Tracing {
  private otel: Otel | undefined;

  private constructor(
    private readonly load: () => OtelApi,
    private readonly version: string,
  ) {}

  /** The tracing of this process, or undefined when the API package is absent. */
  static load(version: string): Tracing | undefined {
    return apiInstalled() ? new Tracing(loadApi, version) : undefined;
  }

  private heard = false;
  private heardAt = Number.NEGATIVE_INFINITY;

  /**
   * Whether anything listens: a tracer or meter provider registered with the API. An
   * installed API with neither would cost a span and a record per request for nothing
   * (~15 µs a call). Asked at most once a second (the API's lookup is not cheap), so a
   * provider registered later is seen within a second. `now`: the caller's clock reading.
   */
  listened(now = performance.now()): boolean {
    if (now - this.heardAt < 1000) return this.heard;
    this.heardAt = now;
    if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return (this.heard = false);
    const { api } = (this.otel ??= this.begin());
    const tracers = api.trace.getTracerProvider() as { getDelegate?: () => object };
    const tracer = tracers.getDelegate?.() ?? tracers;
    this.heard = tracer.constructor.name !== 'NoopTracerProvider' || api.metrics.getMeterProvider().constructor.name !== 'NoopMeterProvider';
    return this.heard;
  }

  private begin(): Otel {
    const api = this.load();
    const meter = api.metrics.getMeter('lazy-mcp', this.version);
    const duration = meter.createHistogram(OPERATION_DURATION, {
      unit: 's',
      description: 'Duration of MCP requests as observed by the client, from sending to the answer',
    });
    return { api, tracer: api.trace.getTracer('lazy-mcp', this.version), duration };
  }

  request(trace: RequestTrace): TraceHandle {
    if (!this.listened()) return UNHEARD;
    const attributes: Record<string, string | number> = {
      'mcp.method.name': trace.method,
      [SERVER_NAME]: trace.server,
      'network.transport': networkTransport(trace.transport),
    };
    if (trace.protocolVersion) attributes['mcp.protocol.version'] = trace.protocolVersion;
    if (trace.target !== undefined) {
      if (trace.method === 'tools/call') {
        attributes['gen_ai.tool.name'] = trace.target;
        attributes['gen_ai.operation.name'] = 'execute_tool';
      } else if (trace.method === 'prompts/get') attributes['gen_ai.prompt.name'] = trace.target;
    }
    const name = trace.target === undefined ? trace.method : `${trace.method} ${trace.target}`;
    const { api, tracer, duration } = this.otel!; // listened() made it
    const span = tracer.startSpan(name, { kind: api.SpanKind.CLIENT, attributes });
    // On the span only: a URI would make the metric's attribute sets unbounded.
    if (trace.resourceUri) span.setAttribute('mcp.resource.uri', trace.resourceUri);
    const started = performance.now();
    return {
      end: (error) => {
        if (error) this.fail(span, attributes, error);
        span.end();
        duration.record((performance.now() - started) / 1000, attributes);
      },
    };
  }

  /** A server's start (spawn or connect, handshake, tool listing): a span of ours, the requests in it being the server's business. */
  start(server: string, transport: RequestTrace['transport']): TraceHandle {
    if (!this.listened()) return UNHEARD;
    const attributes = { [SERVER_NAME]: server, 'network.transport': networkTransport(transport) };
    const { api, tracer } = this.otel!; // listened() made it
    const span = tracer.startSpan(`start ${server}`, { kind: api.SpanKind.INTERNAL, attributes });
    return {
      end: (error) => {
        if (error) this.fail(span, attributes, error);
        span.end();
      },
    };
  }

  private fail(span: OtelSpan, attributes: Record<string, string | number>, error: McpError | typeof TOOL_ERROR): void {
    if (error === TOOL_ERROR) {
      attributes['error.type'] = TOOL_ERROR;
      span.setAttribute('error.type', TOOL_ERROR);
      span.setStatus({ code: this.otel!.api.SpanStatusCode.ERROR });
      return;
    }
    const type = error.rpc ? String(error.rpc.code) : error.code;
    attributes['error.type'] = type;
    span.setAttribute('error.type', type);
    if (error.rpc) {
      attributes['rpc.response.status_code'] = type;
      span.setAttribute('rpc.response.status_code', type);
    }
    span.setStatus({ code: this.otel!.api.SpanStatusCode.ERROR, message: error.rpc?.message ?? error.message });
  }
}

/** `pipe` for stdio, `tcp` for HTTP, as the conventions say. */
function networkTransport(transport: RequestTrace['transport']): string {
  return transport === 'stdio' ? 'pipe' : transport === 'memory' ? 'inproc' : 'tcp';
}

let installed: boolean | undefined;

/** Whether the API package can be found; looked up once per process (a lookup walks the file system). */
function apiInstalled(): boolean {
  if (installed === undefined) {
    try {
      createRequire(import.meta.url).resolve('@opentelemetry/api');
      installed = true;
    } catch {
      installed = false;
    }
  }
  return installed;
}

function loadApi(): OtelApi {
  return createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
}
