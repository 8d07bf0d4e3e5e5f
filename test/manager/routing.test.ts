import { McpServerManager } from '../../src/manager/manager.js';
import { shortHash } from '../../src/manager/catalog/tool-names.js';
import { fixture, textOf } from '../support/fixtures.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { ToolIndex } from '../../src/manager/catalog/tool-index.js';

const SAFE = /^[a-zA-Z0-9_-]{1,64}$/;

describe('names and routing', () => {
  const long = `t${'o'.repeat(98)}l`;
  const raw = ['read.file', 'read_file', 'with space', 'ünïcode', long, 'echo'];
  let manager: McpServerManager;
  beforeAll(() => {
    manager = McpServerManager.fromConfig({
      mcpServers: {
        tools: fixture('named-tools.mjs', JSON.stringify(raw)),
        'other.server': fixture('named-tools.mjs', JSON.stringify(['echo'])),
      },
    });
  });
  afterAll(() => manager.shutdown());

  it('gives every tool a unique public name safe for chat model APIs', async () => {
    const tools = await manager.listTools();
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(SAFE);
    const byRaw = Object.fromEntries(tools.filter((t) => t.server === 'tools').map((t) => [t.tool.name, t.name]));
    expect(byRaw).toEqual({
      'read.file': `mcp__tools__read_file_${shortHash('tools', 'read.file')}`,
      read_file: 'mcp__tools__read_file',
      'with space': 'mcp__tools__with_space',
      'ünïcode': 'mcp__tools___n_code',
      [long]: expect.stringMatching(/^mcp__tools__tooo+_[0-9a-f]{6}$/),
      echo: 'mcp__tools__echo',
    });
    expect(byRaw[long]).toHaveLength(64);
    expect(tools.find((t) => t.server === 'other.server')?.name).toBe('mcp__other_server__echo');
  });

  it('routes each public name back to its server and raw tool name', async () => {
    for (const tool of await manager.listTools()) {
      expect(textOf(await manager.callTool(tool.name))).toBe(`called ${tool.tool.name}`);
    }
  });

  it('keeps the same tool name on two servers apart', async () => {
    expect(textOf(await manager.callTool('mcp__other_server__echo'))).toBe('called echo');
    expect(textOf(await manager.callServerTool('other.server', 'echo'))).toBe('called echo');
  });

  it('names are stable across managers', async () => {
    const again = McpServerManager.fromConfig({
      mcpServers: { tools: fixture('named-tools.mjs', JSON.stringify([...raw].reverse())), 'other.server': fixture('named-tools.mjs', '["echo"]') },
    });
    try {
      const first = (await manager.listTools()).map((t) => t.name).sort();
      const second = (await again.listTools()).map((t) => t.name).sort();
      expect(second).toEqual(first);
    } finally {
      await again.shutdown();
    }
  });

  it('answers unknown-tool with close matches', async () => {
    const error = await manager.callTool('mcp__tools__read_fiel').catch((e) => e);
    expect(error.code).toBe('unknown-tool');
    expect(error.server).toBe('tools');
    expect(error.message).toContain('no tool named "mcp__tools__read_fiel"; did you mean mcp__tools__read_file');
    const nowhere = await manager.callTool('not_a_public_name').catch((e) => e);
    expect(nowhere.code).toBe('unknown-tool');
  });

  it("keeps a tool's own \"not found\" error an rpc-error", async () => {
    const echo = McpServerManager.fromConfig({ mcpServers: { echo: fixture('echo-server.mjs') } });
    try {
      const error = await echo.callTool('mcp__echo__missing_file').catch((e) => e);
      expect(error).toMatchObject({ code: 'rpc-error', rpc: { code: -32602, message: 'tool missing_file: input file not found' } });
      expect(echo.status().echo.tools).toBeGreaterThan(0);
    } finally {
      await echo.shutdown();
    }
  });

  it('maps a server that disowns a tool to unknown-tool', async () => {
    const error = await manager.callServerTool('tools', 'gone').catch((e) => e);
    expect(error.code).toBe('unknown-tool');
    expect(error.rpc).toMatchObject({ code: -32602 });
  });
});

describe('routing starts nothing else', () => {
  it('a call by public name to a never-started server starts only that server', async () => {
    const manager = McpServerManager.fromConfig({
      mcpServers: { a: fixture('echo-server.mjs'), a__b: fixture('named-tools.mjs', '["c"]'), z: fixture('exits-at-once.mjs') },
    });
    const starts: string[] = [];
    manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
    try {
      expect(textOf(await manager.callTool(`mcp__a_b_${shortHash('a__b')}__c`))).toBe('called c');
      expect(starts).toEqual(['a__b']);
      expect(textOf(await manager.callTool('mcp__a__echo', { text: 'x' }))).toBe('x');
      expect(starts).toEqual(['a__b', 'a']);
    } finally {
      await manager.shutdown();
    }
  });
});

describe('names that could belong to two servers', () => {
  const starts = (manager: McpServerManager) => {
    const out: string[] = [];
    manager.on('stateChange', ({ server, to }) => to === 'starting' && out.push(server));
    return out;
  };

  it("routes a's tool b__c to a, not to a__b, in a fresh manager", async () => {
    const config = { mcpServers: { a: fixture('named-tools.mjs', '["b__c"]'), a__b: fixture('named-tools.mjs', '["c"]') } };
    const first = McpServerManager.fromConfig(config);
    const fresh = McpServerManager.fromConfig(config);
    try {
      const tools = await first.listTools();
      expect(new Set(tools.map((t) => t.name)).size).toBe(2);
      const name = tools.find((t) => t.server === 'a')?.name as string;
      const started = starts(fresh);
      expect(textOf(await fresh.callTool(name))).toBe('called b__c');
      expect(started).toEqual(['a']);
      const other = tools.find((t) => t.server === 'a__b')?.name as string;
      expect(textOf(await fresh.callTool(other))).toBe('called c');
    } finally {
      await Promise.all([first.shutdown(), fresh.shutdown()]);
    }
  });

  it('keeps servers db and db. apart for tools _query and query', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { db: fixture('named-tools.mjs', '["_query"]'), 'db.': fixture('named-tools.mjs', '["query"]') } });
    try {
      const tools = await manager.listTools();
      expect(new Set(tools.map((t) => t.name)).size).toBe(2);
      for (const tool of tools) expect(textOf(await manager.callTool(tool.name))).toBe(`called ${tool.tool.name}`);
    } finally {
      await manager.shutdown();
    }
  });
});

describe('hostile names', () => {
  it('lists a tool listed twice once, keeping the first, and warns once', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { d: fixture('duplicate-tools.mjs') } });
    const logs: ManagerEvents['log'][] = [];
    manager.on('log', (e) => logs.push(e));
    try {
      const tools = await manager.listTools();
      expect(tools.map((t) => [t.name, t.tool.description])).toEqual([
        ['mcp__d__twice', 'first'],
        ['mcp__d__once', 'once'],
      ]);
      expect(logs.filter((l) => String(l.data).includes('"twice"'))).toEqual([
        { server: 'd', level: 'warning', logger: 'tools', data: expect.stringContaining('more than once') },
      ]);
      expect(textOf(await manager.callTool('mcp__d__twice'))).toBe('called twice');
    } finally {
      await manager.shutdown();
    }
  });

  it('answers unknown-server for a public name whose server is not configured, starting nothing', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { tools: fixture('named-tools.mjs', '["echo"]'), other: fixture('named-tools.mjs', '["echo"]') } });
    const started: string[] = [];
    manager.on('stateChange', ({ server, to }) => to === 'starting' && started.push(server));
    try {
      const error = await manager.callTool('mcp__nosuch__echo').catch((e) => e);
      expect(error.code).toBe('unknown-server');
      expect(error.message).toContain('"nosuch"');
      expect(error.message).toContain('configured: tools, other');
      const typo = await manager.callTool('mcp__tols__echo').catch((e) => e);
      expect(typo.code).toBe('unknown-server');
      expect(typo.message).toContain('did you mean tools?');
      expect(started).toEqual([]);
    } finally {
      await manager.shutdown();
    }
  });

  it('keeps close-match search fast for a huge name over 10k tools, and still finds a typo', () => {
    const index = new ToolIndex(['s']);
    index.set('s', Array.from({ length: 10_000 }, (_, i) => ({ name: `tool_number_${i}_${'x'.repeat(i % 40)}`, inputSchema: { type: 'object' as const } })));
    const started = performance.now();
    index.closeMatches('y'.repeat(1000));
    index.closeMatches(`mcp__s__${'x'.repeat(56)}`);
    expect(performance.now() - started).toBeLessThan(1500); // unbounded, this took 3.4 s; generous for a loaded box
    expect(index.closeMatches('mcp__s__tool_numbr_42_xx')[0]).toBe('mcp__s__tool_number_42_xx');
  });

  it('shows a server named __proto__ in status()', async () => {
    const manager = McpServerManager.fromConfig('{"mcpServers":{"__proto__":{"command":"x","disabled":true},"ok":{"command":"y","disabled":true}}}');
    try {
      const status = manager.status();
      expect(Object.keys(status)).toEqual(['__proto__', 'ok']);
      expect(status['__proto__'].state).toBe('disabled');
    } finally {
      await manager.shutdown();
    }
  });
});
