import { afterEach, describe, expect, it } from '@jest/globals';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { McpClient } from '../../src/protocol/client.js';
import type { LogMessage } from '../../src/protocol/types.js';
import { StreamableHttpChannel } from '../../src/transport/http/streamable-http.js';
import { listen, type TestHttpServer } from '../transport/http/sdk-servers.js';

const servers: TestHttpServer[] = [];
const clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The SDK v2 server, which refuses a call whose Mcp-Param-* headers are missing or unlike the body (-32020). */
async function routingServer(): Promise<TestHttpServer> {
  const build = () => {
    const server = new McpServer({ name: 'routing', version: '1.0.0' });
    const input = z.object({
      region: z.string().meta({ 'x-mcp-header': 'Region' }),
      priority: z.number().int().optional().meta({ 'x-mcp-header': 'Priority' }),
      query: z.string(),
    });
    server.registerTool('route', { description: 'Runs a query in a region', inputSchema: input }, async ({ region, query }) => ({
      content: [{ type: 'text', text: `${query} in ${region}` }],
    }));
    return server;
  };
  const handler = createMcpHandler(build);
  const node = toNodeHandler(handler);
  const base = await listen((req, res) => node(req, res));
  const server = { ...base, close: async () => (await handler.close(), await base.close()) };
  servers.push(server);
  return server;
}

async function connect(url: string, logs: LogMessage[] = []): Promise<McpClient> {
  const client = await McpClient.over(new StreamableHttpChannel({ url, name: 'routing' }), { name: 'routing', listeners: { log: (m) => logs.push(m) } });
  clients.push(client);
  return client;
}

const calls = (server: TestHttpServer) => server.requests.filter((r) => r.headers['mcp-method'] === 'tools/call').map((r) => r.headers);

describe('x-mcp-header parameters over 2026 Streamable HTTP (SEP-2243)', () => {
  it('a listed tool is called with its marked arguments in Mcp-Param-* headers, which the SDK server checks against the body', async () => {
    const server = await routingServer();
    const client = await connect(server.url);
    expect(client.era).toBe('2026');
    const [tool] = await client.listTools();
    // The listing keeps the schema as the server gave it, marks included.
    expect(tool?.inputSchema.properties).toMatchObject({ region: { 'x-mcp-header': 'Region' } });
    const result = await client.callTool('route', { region: 'Zürich', priority: 3, query: 'SELECT 1' });
    expect(result.content).toEqual([{ type: 'text', text: 'SELECT 1 in Zürich' }]);
    const plain = await client.callTool('route', { region: 'eu-west', query: 'SELECT 2' });
    expect(plain.content).toEqual([{ type: 'text', text: 'SELECT 2 in eu-west' }]);
    const [first, second] = calls(server);
    expect(first).toMatchObject({ 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=`, 'mcp-param-priority': '3' });
    expect(second).toMatchObject({ 'mcp-param-region': 'eu-west' });
    expect(second?.['mcp-param-priority']).toBeUndefined();
    expect(second?.['mcp-param-query']).toBeUndefined();
  });

  it('a call to a tool this session never listed (a cached manifest) is refused by the server, listed, and retried once', async () => {
    const server = await routingServer();
    const client = await connect(server.url);
    const result = await client.callTool('route', { region: 'ap-south', query: 'SELECT 3' });
    expect(result.content).toEqual([{ type: 'text', text: 'SELECT 3 in ap-south' }]);
    const methods = server.requests.map((r) => r.headers['mcp-method']).filter((m) => m === 'tools/call' || m === 'tools/list');
    expect(methods).toEqual(['tools/call', 'tools/list', 'tools/call']);
    expect(calls(server).map((h) => h['mcp-param-region'])).toEqual([undefined, 'ap-south']);
  });

  it('a tool with an invalid mark is left out of the listing with a warning; the others stay', async () => {
    const tools = [
      { name: 'valid_tool', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } },
      { name: 'bad_name', inputSchema: { type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'My Region' } } } },
      { name: 'on_object', inputSchema: { type: 'object', properties: { v: { type: 'object', 'x-mcp-header': 'Data' } } } },
      { name: 'unmarked', inputSchema: { type: 'object' } },
    ];
    const server = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const message = JSON.parse(body) as { id: number; method: string };
        const result =
          message.method === 'server/discover'
            ? { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } }
            : message.method === 'tools/list'
              ? { resultType: 'complete', tools }
              : { resultType: 'complete', content: [] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      });
    });
    servers.push(server);
    const logs: LogMessage[] = [];
    const client = await connect(server.url, logs);
    expect((await client.listTools()).map((t) => t.name)).toEqual(['valid_tool', 'unmarked']);
    expect(logs).toEqual([
      { level: 'warning', logger: 'lazy-mcp', data: expect.stringMatching(/^tool "bad_name" is left out: x-mcp-header "My Region" .* is not an HTTP header name token/) },
      { level: 'warning', logger: 'lazy-mcp', data: expect.stringMatching(/^tool "on_object" is left out: .*needs type string, integer or boolean, got "object"/) },
    ]);
  });
});
