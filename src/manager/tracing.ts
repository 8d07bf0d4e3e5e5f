import { createRequire } from 'node:module';
import type { McpError } from '../errors.js';

// Names from the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai,
// docs/gen-ai/mcp.md): span `{mcp.method.name} {target}`, kind CLIENT, and the
// `mcp.client.operation.duration` histogram in seconds.
const OPERATION_DURATION = 'mcp.client.operation.duration';

/** The parts of `@opentelemetry/api` used here, so the package stays an optional peer. */
interface OtelApi {
  trace: { getTracer(name: string, version?: string): OtelTracer };
  metrics: { getMeter(name: string, version?: string): OtelMeter };
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

/** What one request or start hands back: end it once, with the error when it failed. */
export interface TraceHandle {
  end(error?: McpError): void;
}

export interface RequestTrace {
  server: string;
  method: string;
  /** The tool or prompt name, which becomes the span's target. */
  target?: string;
  transport: 'stdio' | 'http' | 'sse';
  protocolVersion?: string;
  resourceUri?: string;
}

/**
 * Spans and the duration metric for requests and starts, when `@opentelemetry/api` is
 * installed; otherwise `undefined` everywhere, so the request path pays one branch.
 */
export class Tracing {
  private constructor(
    private readonly api: OtelApi,
    private readonly tracer: OtelTracer,
    private readonly duration: ReturnType<OtelMeter['createHistogram']>,
  ) {}

  /** The tracing of this process, or undefined when the API package is absent. */
  static load(version: string): Tracing | undefined {
    const api = loadApi();
    if (!api) return undefined;
    const meter = api.metrics.getMeter('lazy-mcp', version);
    const duration = meter.createHistogram(OPERATION_DURATION, {
      unit: 's',
      description: 'Duration of MCP requests as observed by the client, from sending to the answer',
    });
    return new Tracing(api, api.trace.getTracer('lazy-mcp', version), duration);
  }

  request(trace: RequestTrace): TraceHandle {
    const attributes: Record<string, string | number> = {
      'mcp.method.name': trace.method,
      'mcp.server.name': trace.server,
      'network.transport': trace.transport === 'stdio' ? 'pipe' : 'tcp',
    };
    if (trace.protocolVersion) attributes['mcp.protocol.version'] = trace.protocolVersion;
    if (trace.resourceUri) attributes['mcp.resource.uri'] = trace.resourceUri;
    if (trace.target !== undefined) {
      if (trace.method === 'tools/call') {
        attributes['gen_ai.tool.name'] = trace.target;
        attributes['gen_ai.operation.name'] = 'execute_tool';
      } else if (trace.method === 'prompts/get') attributes['gen_ai.prompt.name'] = trace.target;
    }
    const name = trace.target === undefined ? trace.method : `${trace.method} ${trace.target}`;
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.CLIENT, attributes });
    const started = performance.now();
    return {
      end: (error) => {
        if (error) this.fail(span, attributes, error);
        span.end();
        this.duration.record((performance.now() - started) / 1000, attributes);
      },
    };
  }

  start(server: string, transport: 'stdio' | 'http' | 'sse'): TraceHandle {
    const attributes = { 'mcp.server.name': server, 'network.transport': transport === 'stdio' ? 'pipe' : 'tcp' };
    const span = this.tracer.startSpan(`start ${server}`, { kind: this.api.SpanKind.INTERNAL, attributes });
    return {
      end: (error) => {
        if (error) this.fail(span, attributes, error);
        span.end();
      },
    };
  }

  private fail(span: OtelSpan, attributes: Record<string, string | number>, error: McpError): void {
    attributes['error.type'] = error.code;
    span.setAttribute('error.type', error.code);
    if (error.rpc) span.setAttribute('rpc.response.status_code', String(error.rpc.code));
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error.message });
  }
}

function loadApi(): OtelApi | undefined {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
}
