import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, textOf } from '../support/fixtures.js';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(servers: Record<string, object>, options = {}): { manager: McpServerManager; starts: string[] } {
  const manager = McpServerManager.fromConfig({ mcpServers: servers }, options);
  managers.push(manager);
  const starts: string[] = [];
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  return { manager, starts };
}
const livePids = (manager: McpServerManager) => Object.values(manager.status()).flatMap((s) => (s.pid ? [s.pid] : []));

describe('lazy, single-flight start', () => {
  it('with 30 servers configured, one call starts exactly the one that owns the tool', async () => {
    const servers = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`s${i}`, fixture('echo-server.mjs')]));
    const { manager, starts } = manage(servers);
    expect(livePids(manager)).toEqual([]);
    expect(textOf(await manager.callTool('mcp__s17__echo', { text: 'only me' }))).toBe('only me');
    expect(starts).toEqual(['s17']);
    expect(livePids(manager)).toHaveLength(1);
    expect(manager.status().s17).toMatchObject({ state: 'ready', restarts: 0, tools: 12 });
    expect(manager.status().s3).toEqual({ state: 'idle', transport: 'stdio', restarts: 0 });
  });

  it('fifty concurrent first calls to an idle server start it once', async () => {
    const { manager, starts } = manage({ echo: fixture('echo-server.mjs') });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => manager.callTool('mcp__echo__echo', { text: `n${i}` })));
    expect(results.map(textOf)).toEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
    expect(starts).toEqual(['echo']);
  });

  it('lists six servers that each take 0.7 s to initialize in parallel, not serially', async () => {
    const servers = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`slow${i}`, fixture('slow-init.mjs', '700', `slow${i}`)]));
    const { manager, starts } = manage(servers);
    let starting = 0;
    let mostAtOnce = 0;
    manager.on('stateChange', ({ from, to }) => {
      if (to === 'starting') mostAtOnce = Math.max(mostAtOnce, ++starting);
      if (from === 'starting') starting--;
    });
    const started = Date.now();
    const tools = await manager.listTools();
    const elapsed = Date.now() - started;
    expect(tools.map((t) => t.name)).toEqual(Array.from({ length: 6 }, (_, i) => `mcp__slow${i}__slow${i}_hello`));
    expect(starts).toHaveLength(6);
    // All six were starting at the same time, so the wait is about one start, well under the 4.2 s sum.
    expect(mostAtOnce).toBe(6);
    expect(elapsed).toBeLessThan(4200);
    // A second listing asks no server again.
    await manager.listTools();
    expect(starts).toHaveLength(6);
  });

  it('leaves a failing server out of the listing and reports it in status()', async () => {
    const servers = { good: fixture('echo-server.mjs'), broken: fixture('exits-at-once.mjs'), mute: { ...fixture('never-initializes.mjs'), timeout: 300 } };
    const { manager } = manage(servers, { shutdownGraceMs: 200 });
    const tools = await manager.listTools();
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['good']));
    const status = manager.status();
    // Whether or not the first 250 ms wait is over: a server whose last start failed is backoff.
    expect(status.broken.state).toBe('backoff');
    expect(status.mute.state).toBe('backoff');
    expect(status.broken).toMatchObject({ lastError: { code: 'peer-exited', exitCode: 1 } });
    expect(status.mute).toMatchObject({ lastError: { code: 'timeout', phase: 'initialize' } });
    expect(status.good.state).toBe('ready');
  });

  it('limits a listing to some servers, starting only those', async () => {
    const { manager, starts } = manage({ a: fixture('echo-server.mjs'), b: fixture('echo-server.mjs') });
    const tools = await manager.listTools({ servers: ['b'] });
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['b']));
    expect(starts).toEqual(['b']);
    await expect(manager.listTools({ servers: ['zzz'] })).rejects.toMatchObject({ code: 'unknown-server' });
  });

  it('starts eager servers in the background at construction', async () => {
    const { manager } = manage({ eager: { ...fixture('echo-server.mjs'), startup: 'eager' }, lazy: fixture('echo-server.mjs') });
    const ready = await new Promise<string>((resolve) => manager.on('stateChange', ({ server, to }) => to === 'ready' && resolve(server)));
    expect(ready).toBe('eager');
    expect(manager.status().lazy.state).toBe('idle');
  });
});
