import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { McpError } from '../../src/errors.js';
import { Tracing } from '../../src/manager/tracing.js';

describe('Tracing', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => trace.setGlobalTracerProvider(provider));
  afterAll(async () => {
    trace.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  it('records a tool call as a client span named after the method and the tool', () => {
    const tracing = Tracing.load('0.0.0')!;
    tracing.request({ server: 'fs', method: 'tools/call', target: 'read_file', transport: 'stdio', protocolVersion: '2025-11-25' }).end();
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('tools/call read_file');
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'read_file',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
    });
  });

  it('marks a failed request with the error code', () => {
    const tracing = Tracing.load('0.0.0')!;
    const rpc = { code: -32602, message: 'bad' };
    tracing.request({ server: 'gh', method: 'prompts/get', target: 'review', transport: 'http' }).end(new McpError('rpc-error', 'bad', { rpc }));
    const [span] = exporter.getFinishedSpans();
    expect(span.attributes).toMatchObject({ 'error.type': 'rpc-error', 'rpc.response.status_code': '-32602', 'gen_ai.prompt.name': 'review', 'network.transport': 'tcp' });
    expect(span.status.code).toBe(2);
  });

  it('records starts', () => {
    Tracing.load('0.0.0')!.start('fs', 'stdio').end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['start fs']);
  });
});
