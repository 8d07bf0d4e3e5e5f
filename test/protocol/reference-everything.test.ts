import { McpClient } from '../../src/protocol/client.js';
import type { Progress } from '../../src/protocol/types.js';
import { referenceServer } from '../support/fixtures.js';

// The official reference server, run from node_modules: the client against a real peer.
describe('against @modelcontextprotocol/server-everything', () => {
  let client: McpClient;
  beforeAll(async () => {
    client = await McpClient.connect(referenceServer('everything', 'stdio'), { name: 'everything' });
  });
  afterAll(async () => {
    await client.close();
  });

  it('negotiates the latest revision and reports the server', () => {
    expect(client.protocolVersion).toBe('2025-11-25');
    expect(client.serverInfo.name).toBe('mcp-servers/everything');
    expect(client.capabilities.tools).toBeDefined();
  });

  it('lists its tools with their input schemas', async () => {
    const tools = await client.listTools();
    const echo = tools.find((t) => t.name === 'echo');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(tools.length).toBeGreaterThan(5);
  });

  it('calls tools with text, structured and image results', async () => {
    expect(await client.callTool('echo', { message: 'hi' })).toEqual({ content: [{ type: 'text', text: 'Echo: hi' }] });
    const sum = await client.callTool('get-sum', { a: 2, b: 40 });
    expect(JSON.stringify(sum.content)).toContain('42');
    const image = await client.callTool('get-tiny-image');
    expect(image.content.some((c) => c.type === 'image' && (c as { mimeType: string }).mimeType === 'image/png')).toBe(true);
  });

  it('reports progress of a long-running operation', async () => {
    const seen: Progress[] = [];
    const result = await client.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: (p) => seen.push(p) });
    expect(result.isError).not.toBe(true);
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(seen.every((p) => p.total === 3)).toBe(true);
  });

  it('returns an invalid-arguments failure as an error it can explain', async () => {
    const outcome: { isError?: boolean; code?: string } = await client.callTool('get-sum', { a: 'two' }).then(
      (result) => ({ isError: result.isError }),
      (error) => ({ code: error.code }),
    );
    // Servers differ: some answer isError, some a JSON-RPC error. Neither may hang or crash.
    expect(outcome.isError === true || outcome.code === 'rpc-error').toBe(true);
  });

  it('lists and reads resources and templates', async () => {
    const resources = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const read = await client.readResource(resources[0].uri);
    expect(read.contents[0].uri).toBe(resources[0].uri);
    const templates = await client.listResourceTemplates();
    expect(templates.map((t) => t.uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}');
  });

  it('answers ping', async () => {
    await expect(client.ping()).resolves.toBeUndefined();
  });
});
