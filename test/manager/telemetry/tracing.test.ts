import { metrics, trace, type MeterProvider } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { McpError } from '../../../src/errors.js';
import { McpServerManager } from '../../../src/manager/manager.js';
import { Tracing } from '../../../src/manager/telemetry/tracing.js';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fixture, repoRoot } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';

/** What the duration histogram was given: an SDK's meter reduced to remembering. */
const recorded: { name: string; value: number; attributes: Record<string, unknown> }[] = [];
const recordingMeters = {
  getMeter: () => ({
    createHistogram: (name: string) => ({ record: (value: number, attributes: Record<string, unknown>) => recorded.push({ name, value, attributes }) }),
  }),
} as unknown as MeterProvider;

/** For the describe it is called in: a global tracer provider whose spans are kept in memory, and the recording meters. */
function recordSpans(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    metrics.setGlobalMeterProvider(recordingMeters);
  });
  afterAll(async () => {
    trace.disable();
    metrics.disable();
    await provider.shutdown();
  });
  return exporter;
}

describe('Tracing', () => {
  const exporter = recordSpans();
  beforeEach(() => {
    exporter.reset();
    recorded.length = 0;
  });

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
    // The conventions want the JSON-RPC code as the error type, and its message as the status.
    expect(span.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602', 'gen_ai.prompt.name': 'review', 'network.transport': 'tcp' });
    expect(span.status).toMatchObject({ code: 2, message: 'bad' });
  });

  it('records starts', () => {
    Tracing.load('0.0.0')!.start('fs', 'stdio').end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['start fs']);
  });
});

describe('Tracing in the manager', () => {
  const exporter = recordSpans();
  let manager: McpServerManager | undefined;
  afterEach(async () => {
    await manager?.shutdown();
  });

  it('records a span for the start and one per request, and their durations', async () => {
    recorded.length = 0;
    manager = McpServerManager.fromConfig({ mcpServers: { echo: fixture('echo-server.mjs') } });
    await manager.callTool('mcp__echo__echo', { text: 'x' });
    await manager.callTool('mcp__echo__fail');
    await expect(manager.callTool('mcp__echo__missing_file')).rejects.toMatchObject({ code: 'rpc-error' });
    await expect(manager.callTool('mcp__echo__slow', { ms: 5000 }, { timeout: 200 })).rejects.toMatchObject({ code: 'timeout' });

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(['start echo', 'tools/call echo', 'tools/call fail', 'tools/call missing_file', 'tools/call slow']);
    const [start, echo, fail, missing, slow] = spans;
    expect(start.kind).toBe(0); // INTERNAL
    expect(start.attributes).toEqual({ 'lazy_mcp.server.name': 'echo', 'network.transport': 'pipe' });
    expect(echo.kind).toBe(2); // CLIENT
    expect(echo.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'lazy_mcp.server.name': 'echo',
      'network.transport': 'pipe',
      'mcp.protocol.version': expect.any(String),
    });
    expect(echo.status.code).toBe(0);
    expect(fail.attributes['error.type']).toBe('tool_error');
    expect(fail.status.code).toBe(2);
    expect(missing.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' });
    expect(slow.attributes['error.type']).toBe('timeout');
    // A request's span begins once it is sent: after the start it waited for.
    expect(start.endTime[0] * 1e9 + start.endTime[1]).toBeLessThanOrEqual(echo.startTime[0] * 1e9 + echo.startTime[1]);

    expect(recorded.map((r) => r.name)).toEqual(Array(4).fill('mcp.client.operation.duration'));
    expect(recorded[0].attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' });
    expect(recorded[3].value).toBeGreaterThanOrEqual(0.15);
    expect(recorded[3].value).toBeLessThan(5);
  });
});

describe('Tracing without @opentelemetry/api', () => {
  it('loads nothing and the pool works as before', async () => {
    const dir = tempDir();
    // A host where the optional peer is not installed: resolving it fails as it would then.
    const block = join(dir, 'no-otel.cjs');
    writeFileSync(
      block,
      `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === '@opentelemetry/api') throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' });
  return resolve.call(this, request, ...rest);
};`,
    );
    const host = join(dir, 'host.mjs');
    writeFileSync(
      host,
      `import { Tracing } from ${JSON.stringify(join(repoRoot, 'dist/manager/telemetry/tracing.js'))};
import { McpServerManager } from ${JSON.stringify(join(repoRoot, 'dist/index.js'))};
const manager = McpServerManager.fromConfig({ mcpServers: { echo: ${JSON.stringify(fixture('echo-server.mjs'))} } });
try {
  const result = await manager.callTool('mcp__echo__echo', { text: 'plain' });
  console.log(JSON.stringify({ tracing: Tracing.load('0') === undefined ? 'none' : 'loaded', text: result.content[0].text, calls: manager.metrics().echo.calls }));
} finally {
  await manager.shutdown();
}`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ['--require', block, host], { cwd: repoRoot, timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({ tracing: 'none', text: 'plain', calls: 1 });
  });
});
