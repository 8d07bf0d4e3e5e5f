import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

// A start with a warm manifest cache (same server version and era) is ready after the
// handshake: the cached tools stand until the live listing, sent after the first call, lands.

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});

interface Setup {
  cacheDir: string;
  /** Sets the tools the server serves from its next start on. */
  serve(tools: string[], hold?: boolean): void;
  manage(): { manager: McpServerManager; starts: string[]; changes: string[] };
}

function setup(): Setup {
  const cacheDir = tempDir();
  const toolsFile = join(tempDir(), 'tools.json');
  const config = { mcpServers: { s: fixture('tools-from-file.mjs', toolsFile) } };
  return {
    cacheDir,
    serve: (tools, hold = false) => writeFileSync(toolsFile, JSON.stringify({ tools, hold })),
    manage: () => {
      const manager = McpServerManager.fromConfig(config, { cacheDir });
      managers.push(manager);
      const starts: string[] = [];
      const changes: string[] = [];
      manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
      manager.on('toolsChanged', ({ server }) => changes.push(server));
      return { manager, starts, changes };
    },
  };
}

/** A first manager lists the server live and leaves its entry in the cache. */
async function warm(s: Setup, tools: string[]): Promise<void> {
  s.serve(tools);
  const { manager } = s.manage();
  await manager.listTools();
  await manager.shutdown();
  expect(readdirSync(s.cacheDir).filter((f) => f.endsWith('.json'))).toHaveLength(1);
}

const names = async (manager: McpServerManager) => (await manager.listTools()).map((t) => t.name).sort();

describe('a start on a warm manifest cache', () => {
  it('answers the first call without waiting for the tools listing', async () => {
    const s = setup();
    await warm(s, ['a', 'b']);
    // This start's tools/list answer is held until the tool release_listing is called.
    s.serve(['a', 'b', 'c'], true);
    const { manager, starts } = s.manage();
    expect(textOf(await manager.callTool('mcp__s__a'))).toBe('a');
    expect(starts).toEqual(['s']);
    await manager.callTool('mcp__s__release_listing');
    // A listing asked for while the live one is on its way waits for it.
    expect(await names(manager)).toEqual(['mcp__s__a', 'mcp__s__b', 'mcp__s__c', 'mcp__s__release_listing']);
  });

  it('tells of changed tools once the listing lands, and a shutdown right after the call lets it reach the cache', async () => {
    const s = setup();
    await warm(s, ['a', 'b']);
    s.serve(['a', 'c']);
    const second = s.manage();
    expect(textOf(await second.manager.callTool('mcp__s__a'))).toBe('a');
    await second.manager.shutdown();
    expect(second.changes).toEqual(['s']);

    const third = s.manage();
    expect(await names(third.manager)).toEqual(['mcp__s__a', 'mcp__s__c', 'mcp__s__release_listing']);
    expect(third.starts).toEqual([]);
  });

  it('calls a cached tool the server no longer has: toolsChanged comes before the error, and the tool is gone', async () => {
    const s = setup();
    await warm(s, ['a', 'b']);
    s.serve(['a']);
    const { manager, changes } = s.manage();
    const seen: string[] = [];
    manager.on('toolsChanged', () => seen.push('toolsChanged'));
    await expect(
      manager.callTool('mcp__s__b').catch((error: unknown) => {
        seen.push('error');
        throw error;
      }),
    ).rejects.toMatchObject({ code: 'unknown-tool' });
    expect(seen).toEqual(['toolsChanged', 'error']);
    expect(changes).toEqual(['s']);
    expect(await names(manager)).toEqual(['mcp__s__a', 'mcp__s__release_listing']);
  });

  it('refuses arguments that do not fit a cached schema without starting the server', async () => {
    const s = setup();
    await warm(s, ['a']);
    const { manager, starts } = s.manage();
    await expect(manager.callTool('mcp__s__a', { n: 'not a number' })).rejects.toMatchObject({ code: 'invalid-arguments' });
    expect(starts).toEqual([]);
  });

  it('leaves the cache file alone when the live listing says what it holds', async () => {
    const s = setup();
    await warm(s, ['a']);
    const file = join(s.cacheDir, readdirSync(s.cacheDir).find((f) => f.endsWith('.json'))!);
    const before = statSync(file);
    const { manager, starts } = s.manage();
    expect(textOf(await manager.callTool('mcp__s__a'))).toBe('a');
    expect(await waitFor(() => manager.status().s.state === 'ready', 5000)).toBe(true);
    await manager.shutdown();
    expect(starts).toEqual(['s']);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });
});
