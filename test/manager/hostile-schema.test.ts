import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '../../src/errors.js';
import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(cacheDir?: string) {
  const manager = McpServerManager.fromConfig({ mcpServers: { deep: fixture('deep-schema.mjs') } }, cacheDir ? { cacheDir } : {});
  managers.push(manager);
  const logs: string[] = [];
  const starts: string[] = [];
  manager.on('log', ({ data }) => logs.push(String(data)));
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  return { manager, logs, starts };
}
/** A 5,000-deep schema as JSON text: JSON.stringify overflows on such a value, JSON.parse does not. */
const deepText = (depth: number) => '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + '}}'.repeat(depth);

describe('a server listing a 5,000-deep inputSchema', () => {
  it('leaves that tool out with a warning, and the server and its other tools keep working', async () => {
    const { manager, logs } = manage();
    const names = (await manager.listTools()).map((t) => t.name);
    expect(names).toEqual(['mcp__deep__echo', 'mcp__deep__exit', 'mcp__deep__deep_result', 'mcp__deep__deep_error']);
    expect(logs.some((l) => l.includes('"deep"') && /nests deeper than \d+ levels/.test(l))).toBe(true);
    expect(textOf(await manager.callTool('mcp__deep__echo', { text: 'hi' }))).toBe('hi');

    const error = await manager.callTool('mcp__deep__deep').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'protocol-error', server: 'deep', phase: 'tools/list' });
    expect((error as McpError).message).toMatch(/^server "deep": tool "deep" .*nests deeper than \d+ levels/);
    expect((await manager.searchTools('hostile schema')).map((t) => t.name)).not.toContain('mcp__deep__deep');
  });

  it('refuses a 5,000-deep result with protocol-error, and the connection stays up', async () => {
    const { manager } = manage();
    const error = await manager.callTool('mcp__deep__deep_result').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'protocol-error', server: 'deep', phase: 'tools/call' });
    expect((error as McpError).message).toMatch(/tool "mcp__deep__deep_result" nests deeper than \d+ levels/);
    // The caller got an error, so the metrics count one, not a success.
    expect(manager.metrics().deep).toMatchObject({ calls: 1, inFlight: 0, errors: { 'protocol-error': 1 } });
    expect(textOf(await manager.callTool('mcp__deep__echo', { text: 'still' }))).toBe('still');
    expect(manager.metrics().deep).toMatchObject({ calls: 2, inFlight: 0, errors: { 'protocol-error': 1 } });
  });

  it('answers a 5,000-deep JSON-RPC error as an rpc-error that is safe to serialize', async () => {
    const { manager } = manage();
    const error = await manager.callTool('mcp__deep__deep_error').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'rpc-error', server: 'deep', rpc: { code: -32000 } });
    expect((error as McpError).rpc?.data).toBeUndefined();
    expect(typeof JSON.stringify({ ...(error as McpError), message: (error as McpError).message })).toBe('string');
  });

  it('starts again after the server exits (the catalog compares the new listing with the old)', async () => {
    const { manager, starts } = manage();
    await manager.listTools();
    const exit = await manager.callTool('mcp__deep__exit').catch((e: unknown) => e);
    expect(exit).toBeInstanceOf(McpError);
    expect(await waitFor(() => manager.status().deep.state === 'stopped', 5000)).toBe(true);
    expect(textOf(await manager.callTool('mcp__deep__echo', { text: 'again' }))).toBe('again');
    expect(starts).toEqual(['deep', 'deep']);
    expect(manager.status().deep.state).toBe('ready');
  });

  it('caches what it kept, and a planted cache entry with a deep schema is refused the same way', async () => {
    const dir = tempDir();
    const first = manage(dir);
    await first.manager.listTools();
    expect(await waitFor(() => readdirSync(dir).some((f) => f.endsWith('.json')), 5000)).toBe(true);
    await first.manager.shutdown();

    const second = manage(dir);
    expect((await second.manager.listTools()).map((t) => t.name)).toEqual(['mcp__deep__echo', 'mcp__deep__exit', 'mcp__deep__deep_result', 'mcp__deep__deep_error']);
    expect(second.starts).toEqual([]);

    // The same entry with the deep tool written in (by hand: JSON.stringify cannot).
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.json')) as string);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"tools":[', `"tools":[{"name":"deep","inputSchema":${deepText(5000)}},`));
    const third = manage(dir);
    expect((await third.manager.listTools()).map((t) => t.name)).toEqual(['mcp__deep__echo', 'mcp__deep__exit', 'mcp__deep__deep_result', 'mcp__deep__deep_error']);
    expect(third.starts).toEqual([]);
    const error = await third.manager.callTool('mcp__deep__deep').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'protocol-error', server: 'deep' });
  });
});

describe('argument and result checks against a schema', () => {
  it('refuse a 5,000-deep value, even against a recursive schema, instead of overflowing', async () => {
    const { compileSchema } = await import('../../src/protocol/schemas/schema-validator.js');
    const tree = compileSchema({ $defs: { n: { type: 'object', properties: { a: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' });
    const deep = JSON.parse(`${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}`);
    expect(tree?.check(deep)).toEqual([{ path: '', message: expect.stringMatching(/nests deeper than \d+ levels/) }]);
    expect(tree?.check({ a: { a: {} } })).toEqual([]);
  });
});

describe('the chat-API adapters given hostile schemas and results', () => {
  const deepValue = () => JSON.parse(`${'{"a":'.repeat(5000)}0${'}'.repeat(5000)}`);
  const schemas: Record<string, unknown> = {
    'nested properties': JSON.parse(deepText(5000)),
    'nested allOf': JSON.parse(`${'{"allOf":['.repeat(5000)}{"type":"object"}${']}'.repeat(5000)}`),
    'nested anyOf': JSON.parse(`{"type":"object","properties":{"x":${'{"anyOf":['.repeat(5000)}{"type":"null"}${']}'.repeat(5000)}}}`),
    'a deep const': { type: 'object', properties: { x: { const: deepValue() } } },
    'a deep default': { type: 'object', properties: { x: { type: 'object', default: deepValue() } } },
    'a deep enum': { type: 'object', properties: { x: { enum: [deepValue()] } } },
  };
  it.each(Object.keys(schemas))('gives every adapter a schema that serializes, for %s', async (name) => {
    const { anthropicSchema, geminiSchema, openAiSchema } = await import('../../src/adapters.js');
    const schema = schemas[name];
    const outputs = [openAiSchema(schema).parameters, openAiSchema(schema, { strict: false }).parameters, geminiSchema(schema).schema, anthropicSchema(schema).schema];
    for (const out of outputs) expect(typeof JSON.stringify(out ?? null)).toBe('string');
  });

  it('turns a deep structuredContent into a note, not a stack overflow', async () => {
    const { toAnthropicToolResult, toGeminiFunctionResponse, toOpenAiChatToolMessage, toOpenAiFunctionCallOutput } = await import('../../src/adapters.js');
    const result = { content: [], structuredContent: deepValue() };
    expect(toOpenAiChatToolMessage('1', result).content).toMatch(/structured content left out: it nests deeper than \d+ levels/);
    for (const out of [toAnthropicToolResult('1', result), toGeminiFunctionResponse('f', result), toOpenAiFunctionCallOutput('1', result)]) {
      expect(JSON.stringify(out)).toMatch(/structured content left out/);
    }
  });
});
