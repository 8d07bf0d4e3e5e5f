import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dirs.js';
import { McpServerManager } from '../../src/manager/manager.js';
import { isAlive, referenceServer, textOf } from '../support/fixtures.js';


// The three official reference servers, from node_modules, through one manager.
describe('one manager over the reference servers', () => {
  const dir = realpathSync(tempDir('lazy-mcp-ref-'));
  const data = join(dir, 'data');
  const memoryFile = join(dir, 'memory.jsonl');
  let manager: McpServerManager;
  beforeAll(() => {
    mkdirSync(data);
    writeFileSync(join(data, 'hello.txt'), 'hello from the filesystem server\n');
    manager = McpServerManager.fromConfig({
      mcpServers: {
        everything: referenceServer('everything', 'stdio'),
        filesystem: referenceServer('filesystem', data),
        memory: { ...referenceServer('memory'), env: { MEMORY_FILE_PATH: memoryFile } },
      },
    });
  });
  afterAll(async () => {
    const pids = Object.values(manager.status()).flatMap((s) => (s.pid ? [s.pid] : []));
    await manager.shutdown();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  it('lists the tools of all three under public names', async () => {
    const tools = await manager.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__filesystem__read_text_file', 'mcp__memory__create_entities']));
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['everything', 'filesystem', 'memory']));
  });

  it('routes calls to each server', async () => {
    expect(textOf(await manager.callTool('mcp__everything__echo', { message: 'ping' }))).toBe('Echo: ping');
    const file = await manager.callTool('mcp__filesystem__read_text_file', { path: join(data, 'hello.txt') });
    expect(textOf(file)).toContain('hello from the filesystem server');
    const outside = await manager.callTool('mcp__filesystem__read_text_file', { path: '/etc/hostname' });
    expect(outside.isError).toBe(true);
    await manager.callTool('mcp__memory__create_entities', {
      entities: [{ name: 'lazy-mcp', entityType: 'project', observations: ['starts servers lazily'] }],
    });
    const graph = await manager.callTool('mcp__memory__read_graph');
    expect(textOf(graph)).toContain('starts servers lazily');
    expect(existsSync(memoryFile) && readFileSync(memoryFile, 'utf8')).toContain('lazy-mcp');
  });

  it('reads resources through the manager', async () => {
    const resources = await manager.listResources('everything');
    expect(resources.length).toBeGreaterThan(0);
    const read = await manager.readResource('everything', resources[0].resource.uri);
    expect(read.contents[0].uri).toBe(resources[0].resource.uri);
    const templates = await manager.listResourceTemplates('everything');
    expect(templates.map((t) => t.resourceTemplate.uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}');
  });

  it('keeps one process per server across many concurrent calls', async () => {
    const pid = manager.status().everything.pid;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => manager.callTool('mcp__everything__echo', { message: `m${i}` })));
    expect(results.map(textOf)).toEqual(Array.from({ length: 200 }, (_, i) => `Echo: m${i}`));
    expect(manager.status().everything).toMatchObject({ pid, restarts: 0, state: 'ready' });
  });
});
