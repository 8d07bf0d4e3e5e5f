import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, isAlive, referenceServer, textOf } from '../support/fixtures.js';

// A 2026-only server (official SDK v2, `legacy: 'reject'`) and a legacy reference server, in one manager.
describe('one manager mixing a 2026-only server and a legacy one', () => {
  let manager: McpServerManager;
  beforeAll(() => {
    manager = McpServerManager.fromConfig({
      mcpServers: {
        modern: fixture('sdk2-modern-server.mjs'),
        everything: referenceServer('everything', 'stdio'),
      },
    });
  });
  afterAll(async () => {
    const pids = Object.values(manager.status()).flatMap((s) => (s.pid ? [s.pid] : []));
    await manager.shutdown();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  it('lists the tools of both servers', async () => {
    const tools = await manager.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__modern__echo', 'mcp__modern__confirm', 'mcp__everything__echo']));
    expect(tools.find((t) => t.name === 'mcp__modern__echo')).toMatchObject({ server: 'modern', tool: { name: 'echo', description: 'Echoes text', inputSchema: { required: ['text'] } } });
  });

  it('calls tools in both eras', async () => {
    expect(textOf(await manager.callTool('mcp__modern__echo', { text: 'from 2026' }))).toBe('from 2026');
    expect(textOf(await manager.callTool('mcp__everything__echo', { message: 'from legacy' }))).toBe('Echo: from legacy');
  });

  it('reports era, protocol version and transport per server', async () => {
    await manager.listTools();
    const status = manager.status();
    expect(status.modern).toMatchObject({ state: 'ready', era: '2026', protocolVersion: '2026-07-28', transport: 'stdio' });
    expect(status.everything).toMatchObject({ state: 'ready', era: 'legacy', transport: 'stdio' });
    expect(status.everything.protocolVersion).toMatch(/^20\d\d-\d\d-\d\d$/);
    expect(status.everything.protocolVersion).not.toBe('2026-07-28');
  });
});
