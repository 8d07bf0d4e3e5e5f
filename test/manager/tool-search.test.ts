import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { tempDir } from '../support/temp-dirs.js';
import { fixture, referenceServer } from '../support/fixtures.js';

const managers: McpServerManager[] = [];
afterAll(async () => {
  await Promise.all(managers.map((m) => m.shutdown()));
});
function manage(config: object, cacheDir?: string): { manager: McpServerManager; starts: string[] } {
  const manager = McpServerManager.fromConfig(config, cacheDir ? { cacheDir } : {});
  managers.push(manager);
  const starts: string[] = [];
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  return { manager, starts };
}

describe('searchTools over the reference servers', () => {
  const dir = realpathSync(tempDir('lazy-mcp-search-'));
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = {
    mcpServers: {
      everything: referenceServer('everything', 'stdio'),
      filesystem: referenceServer('filesystem', data),
      memory: { ...referenceServer('memory'), env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
    },
  };
  const cacheDir = join(dir, 'cache');

  it('finds tools from descriptive queries and exact names once the tools are known', async () => {
    const { manager } = manage(config, cacheDir);
    // Nothing known, nothing cached: search starts nothing and finds nothing.
    expect(await manager.searchTools('read a file')).toEqual([]);
    expect(Object.values(manager.status()).map((s) => s.state)).toEqual(['idle', 'idle', 'idle']);
    await manager.listTools();
    const top3 = async (query: string) => (await manager.searchTools(query, { limit: 3 })).map((m) => m.name);
    expect(await top3('read the text of a file')).toContain('mcp__filesystem__read_text_file');
    expect(await top3('make a new directory')).toContain('mcp__filesystem__create_directory');
    expect(await top3('remember new entities in the knowledge graph')).toContain('mcp__memory__create_entities');
    expect(await top3('add two numbers')).toContain('mcp__everything__get-sum');
    expect((await manager.searchTools('read_file'))[0].name).toBe('mcp__filesystem__read_file');
    expect((await manager.searchTools('get-env'))[0].name).toBe('mcp__everything__get-env');
    const all = await manager.searchTools('file');
    expect(all).toHaveLength(8);
    expect(all[0]).toEqual({ name: expect.any(String), server: 'filesystem', tool: expect.objectContaining({ inputSchema: expect.any(Object) }), score: expect.any(Number) });
    expect(new Set((await manager.searchTools('delete', { servers: ['memory'], limit: 20 })).map((m) => m.server))).toEqual(new Set(['memory']));
    await expect(manager.searchTools('x', { limit: 0 })).rejects.toMatchObject({ code: 'invalid-arguments' });
    await expect(manager.searchTools('x', { servers: ['nope'] })).rejects.toMatchObject({ code: 'unknown-server' });
    await manager.shutdown();
  });

  it('answers a new manager from a warm manifest cache with zero spawns', async () => {
    const { manager, starts } = manage(config, cacheDir);
    const found = await manager.searchTools('list the files in a directory', { limit: 3 });
    expect(found.map((m) => m.name)).toContain('mcp__filesystem__list_directory');
    expect((await manager.searchTools('mcp__memory__read_graph'))[0].name).toBe('mcp__memory__read_graph');
    const session = manager.session({ servers: ['memory'] });
    expect((await session.searchTools('delete a relation'))[0].name).toBe('mcp__memory__delete_relations');
    await expect(session.searchTools('x', { servers: ['filesystem'] })).rejects.toMatchObject({ code: 'unknown-server' });
    expect(starts).toEqual([]);
    expect(Object.values(manager.status()).map((s) => s.state)).toEqual(['idle', 'idle', 'idle']);
    await manager.shutdown();
  });
});

describe('searchTools and toolsChanged', () => {
  it('sees the tools a server adds after list_changed, without a restart', async () => {
    const { manager, starts } = manage({ mcpServers: { g: fixture('grows-tools.mjs') } });
    await manager.listTools();
    expect(await manager.searchTools('weather forecast')).toEqual([]);
    const changed = new Promise((resolve) => manager.once('toolsChanged', resolve));
    await manager.callTool('mcp__g__grow', { name: 'get_forecast', description: 'Weather forecast for a city' });
    await changed;
    expect((await manager.searchTools('weather forecast')).map((m) => m.name)).toEqual(['mcp__g__get_forecast']);
    expect(starts).toEqual(['g']);
  });
});

describe('searchTools with nothing known yet', () => {
  it('says nothing is indexed (and which servers are not), until a listTools() warm-up', async () => {
    const { manager, starts } = manage({ mcpServers: { a: fixture('echo-server.mjs'), b: fixture('echo-server.mjs') } });
    const cold = await manager.searchTools('add two numbers');
    expect([...cold]).toEqual([]);
    expect(cold.nothingIndexed).toBe(true);
    expect(cold.unindexed).toEqual(['a', 'b']);
    expect(starts).toEqual([]);

    await manager.listTools({ servers: ['a'] });
    const half = await manager.searchTools('add two numbers');
    expect(half.nothingIndexed).toBe(false);
    expect(half.unindexed).toEqual(['b']);
    expect(half[0].name).toBe('mcp__a__add');
    // The flags are not enumerable: the answer still serialises as the list of matches.
    expect(Object.keys(JSON.parse(JSON.stringify(half))[0])).toEqual(['name', 'server', 'tool', 'score']);
  });

  it('search_tools (the model-facing pair) warms up by itself when nothing is indexed', async () => {
    const { runSearchAndCall } = await import('../../src/model/search-call-tools.js');
    const { manager } = manage({ mcpServers: { a: fixture('echo-server.mjs') } });
    const result = await runSearchAndCall(manager.session(), 'search_tools', { query: 'add two numbers', limit: 1 });
    expect((result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['mcp__a__add']);
  });
});

describe('searchTools with a host embedding', () => {
  it('ranks by the embedding too, for a manager and a session, embedding a tool again only when the server lists it anew', async () => {
    const { manager } = manage({ mcpServers: { g: fixture('grows-tools.mjs') } });
    await manager.listTools();
    const changed = new Promise((resolve) => manager.once('toolsChanged', resolve));
    await manager.callTool('mcp__g__grow', { name: 'brew', description: 'Makes tea' });
    await changed;
    const texts: string[] = [];
    // Deterministic: "beverage" and "tea" share a dimension, as in a real model.
    const embed = async (batch: string[]) => {
      texts.push(...batch);
      return batch.map((t) => [/tea|beverage/i.test(t) ? 1 : 0, /adds|grow/i.test(t) ? 1 : 0, 0.1]);
    };
    expect(await manager.searchTools('a hot beverage')).toEqual([]);
    const found = await manager.searchTools('a hot beverage', { embed, limit: 1 });
    expect(found.map((m) => m.name)).toEqual(['mcp__g__brew']);
    expect(found.nothingIndexed).toBe(false);
    expect(texts.filter((t) => t !== 'a hot beverage')).toHaveLength(2);
    texts.length = 0;
    expect((await manager.session({ servers: ['g'] }).searchTools('a hot beverage', { embed, limit: 1 }))[0].name).toBe('mcp__g__brew');
    expect(texts).toEqual(['a hot beverage']);
    await expect(manager.searchTools('tea', { embed: 'model' as never })).rejects.toMatchObject({ code: 'invalid-arguments', message: 'searchTools embed must be a function, got string' });
  });
});
