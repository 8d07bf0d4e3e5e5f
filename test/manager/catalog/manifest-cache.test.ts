import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../../src/manager/manager.js';
import type { ManagerEvents, ManagerOptions } from '../../../src/manager/manager.js';
import { ManifestCache } from '../../../src/manager/catalog/manifest-cache.js';
import { tempDir } from '../../support/temp-dirs.js';
import { fixture, waitFor } from '../../support/fixtures.js';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(config: object, cacheDir: string, options: ManagerOptions = {}): { manager: McpServerManager; starts: string[]; events: string[] } {
  const manager = McpServerManager.fromConfig(config, { cacheDir, ...options });
  managers.push(manager);
  const starts: string[] = [];
  const events: string[] = [];
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  manager.on('toolsChanged', ({ server }) => events.push(server));
  return { manager, starts, events };
}
const cacheFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.json'));
const waitForFiles = (dir: string, n: number) => waitFor(() => cacheFiles(dir).length === n, 5000);

describe('tool manifest cache', () => {
  it('lets a second manager list every tool with zero spawns', async () => {
    const dir = join(tempDir(), 'created-if-missing');
    const servers = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`s${i}`, fixture('named-tools.mjs', JSON.stringify([`tool${i}`, 'shared']))]));
    const config = { mcpServers: servers };
    const first = manage(config, dir);
    const listed = await first.manager.listTools();
    expect(first.starts).toHaveLength(5);
    // Writes never delay a listing: they land soon after.
    expect(await waitForFiles(dir, 5)).toBe(true);

    const second = manage(config, dir);
    const cached = await second.manager.listTools();
    expect(cached).toEqual(listed);
    expect(second.starts).toEqual([]);
    expect(Object.values(second.manager.status()).every((s) => s.state === 'idle' && s.tools === 2)).toBe(true);

    // A call starts just its server, which revalidates (same tools: no event).
    const result = await second.manager.callTool('mcp__s3__tool3');
    expect(result.content).toEqual([{ type: 'text', text: 'called tool3' }]);
    expect(second.starts).toEqual(['s3']);
    expect(second.events).toEqual([]);
  });

  it('keeps the entry of a server that says its tools changed right after it started', async () => {
    const dir = tempDir();
    const config = { mcpServers: { cron: fixture('list-changed-at-start.mjs') } };
    const first = manage(config, dir);
    await first.manager.listTools();
    expect(await waitFor(() => first.events.length === 1, 5000)).toBe(true);
    // The notice leads to a re-listing that writes the entry again, not to a lost entry.
    expect(await waitForFiles(dir, 1)).toBe(true);
    expect(await waitFor(() => first.manager.status().cron.tools === 1, 5000)).toBe(true);
    await first.manager.shutdown();

    const second = manage(config, dir);
    expect((await second.manager.listTools()).map((t) => t.name)).toEqual(['mcp__cron__echo']);
    expect(second.starts).toEqual([]);
  });

  it('revalidates on the first real start and emits toolsChanged when the tools differ', async () => {
    const dir = tempDir();
    const names = join(dir, 'names.json');
    writeFileSync(names, '["old_tool"]');
    const config = { mcpServers: { s: fixture('named-tools.mjs', `@${names}`) } };
    const first = manage(config, dir);
    await first.manager.listTools();
    expect(await waitForFiles(dir, 2)).toBe(true);

    writeFileSync(names, '["new_tool"]');
    const second = manage(config, dir);
    expect((await second.manager.listTools()).map((t) => t.name)).toEqual(['mcp__s__old_tool']);
    const error = await second.manager.callTool('mcp__s__old_tool').catch((e) => e);
    expect(error.code).toBe('unknown-tool');
    expect(second.events).toEqual(['s']);
    expect((await second.manager.listTools()).map((t) => t.name)).toEqual(['mcp__s__new_tool']);
    const entry = () => cacheFiles(dir).find((f) => f !== 'names.json');
    expect(await waitFor(() => entry() !== undefined && readFileSync(join(dir, entry() as string), 'utf8').includes('new_tool'))).toBe(true);
  });

  it('treats a changed config as a stale entry', async () => {
    const dir = tempDir();
    const first = manage({ mcpServers: { s: fixture('named-tools.mjs', '["a"]') } }, dir);
    await first.manager.listTools();
    expect(await waitForFiles(dir, 1)).toBe(true);
    const second = manage({ mcpServers: { s: fixture('named-tools.mjs', '["b"]') } }, dir);
    expect((await second.manager.listTools()).map((t) => t.tool.name)).toEqual(['b']);
    expect(second.starts).toEqual(['s']);
  });

  it('replaces the entry on list_changed by listing the running server again', async () => {
    const dir = tempDir();
    const config = { mcpServers: { echo: fixture('echo-server.mjs') } };
    const first = manage(config, dir);
    await first.manager.listTools();
    expect(await waitForFiles(dir, 1)).toBe(true);
    await first.manager.callTool('mcp__echo__tools_changed');
    expect(first.events).toEqual(['echo']);
    expect(await waitFor(() => first.manager.status().echo.tools !== undefined && cacheFiles(dir).length === 1, 5000)).toBe(true);
  });

  it('ignores a corrupt or foreign cache file with a log event, never failing', async () => {
    const dir = tempDir();
    const config = { mcpServers: { s: fixture('named-tools.mjs', '["a"]') } };
    const first = manage(config, dir);
    await first.manager.listTools();
    expect(await waitForFiles(dir, 1)).toBe(true);
    const [file] = cacheFiles(dir);

    for (const garbage of ['{ not json', JSON.stringify({ format: 'something-else', tools: 3 })]) {
      writeFileSync(join(dir, file), garbage);
      const next = manage(config, dir);
      const logs: ManagerEvents['log'][] = [];
      next.manager.on('log', (e) => logs.push(e));
      expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
      expect(next.starts).toEqual(['s']);
      expect(logs).toEqual([expect.objectContaining({ server: 's', level: 'warning', logger: 'cache', data: expect.stringContaining('server "s"') })]);
      // It is overwritten with a good entry.
      expect(await waitFor(() => readFileSync(join(dir, file), 'utf8').includes('lazy-mcp/tool-manifest@1'))).toBe(true);
      await next.manager.shutdown();
    }
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe("tool manifest cache: what changes a server's answer", () => {
  const config = { mcpServers: { caps: fixture('tools-by-capabilities.mjs') } };
  const names = async (manager: McpServerManager) => (await manager.listTools()).map((t) => t.tool.name).sort();

  it('keys an entry on the declared capabilities: a client that turns sampling on is not served the old list', async () => {
    const dir = tempDir();
    const plain = manage(config, dir);
    expect(await names(plain.manager)).toEqual(['plain']);
    expect(await waitForFiles(dir, 1)).toBe(true);
    await plain.manager.shutdown();

    const sampling = manage(config, dir, { capabilities: { sampling: true } });
    expect(await names(sampling.manager)).toEqual(['plain', 'sample']);
    expect(sampling.starts).toEqual(['caps']);
    await sampling.manager.shutdown();

    // Each handshake keeps its own answer: the same one again starts nothing.
    const again = manage(config, dir, { capabilities: { sampling: true } });
    expect(await names(again.manager)).toEqual(['plain', 'sample']);
    expect(again.starts).toEqual([]);
  });

  it('keys on clientInfo and on whether roots are declared', () => {
    const server = { command: 'node', args: ['x.mjs'], env: {}, inheritEnv: false } as unknown as Parameters<typeof ManifestCache.keyOf>[0];
    const base = ManifestCache.keyOf(server, ManifestCache.handshakeKey({ name: 'host', version: '1' }, []));
    expect(ManifestCache.keyOf(server, ManifestCache.handshakeKey({ name: 'host', version: '2' }, []))).not.toBe(base);
    expect(ManifestCache.keyOf(server, ManifestCache.handshakeKey({ name: 'host', version: '1' }, ['roots']))).not.toBe(base);
    expect(ManifestCache.keyOf(server, ManifestCache.handshakeKey({ name: 'host', version: '1' }, ['sampling', 'roots']))).toBe(
      ManifestCache.keyOf(server, ManifestCache.handshakeKey({ name: 'host', version: '1' }, ['roots', 'sampling'])),
    );
  });

  it('a call naming a tool the cache entry lacks lists the server live once, then calls it', async () => {
    const dir = tempDir();
    const toolsFile = join(tempDir(), 'tools.json');
    writeFileSync(toolsFile, JSON.stringify({ tools: ['old'] }));
    const fromFile = { mcpServers: { s: fixture('tools-from-file.mjs', toolsFile) } };
    const first = manage(fromFile, dir);
    expect((await first.manager.listTools()).map((t) => t.tool.name)).toContain('old');
    expect(await waitForFiles(dir, 1)).toBe(true);
    await first.manager.shutdown();

    // The server's answer changed under the same config (a new version, say).
    writeFileSync(toolsFile, JSON.stringify({ tools: ['old', 'added'] }));
    const second = manage(fromFile, dir);
    expect((await second.manager.listTools()).map((t) => t.tool.name)).not.toContain('added');
    const result = await second.manager.callTool('mcp__s__added');
    expect(result.content).toEqual([{ type: 'text', text: 'added' }]);
    expect((await second.manager.listTools()).map((t) => t.tool.name)).toContain('added');
    // A name it really lacks is still unknown, after that one listing.
    await expect(second.manager.callTool('mcp__s__missing')).rejects.toMatchObject({ code: 'unknown-tool' });
    expect(second.starts).toEqual(['s']);
  });
});
