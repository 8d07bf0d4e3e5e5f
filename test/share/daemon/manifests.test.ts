import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopDaemon } from '../../../src/share/daemon/control.js';
import { fixture, isAlive, textOf, waitFor } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';
import { sharedManager, sharedOptions } from './support.js';

const toolNames = async (m: { listTools(): Promise<{ name: string }[]> }) => (await m.listTools()).map((t) => t.name).filter((n) => !n.endsWith('release_listing'));

/** A server that notes each of its starts in a file, and how many there were. */
function counted(name: string, ...args: string[]): { config: { command: string; args: string[] }; starts: () => number } {
  const file = join(tempDir('lazy-mcp-starts-'), 'starts');
  const starts = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').length : 0);
  return { config: fixture('counts-starts.mjs', file, name, ...args), starts };
}

describe("the pool daemon's manifest cache", () => {
  it("a known entry's first listing starts nothing, for a client with no cache of its own or another cache folder, even after a daemon restart", async () => {
    const shared = sharedOptions();
    const { config, starts } = counted('echo-server.mjs');
    const first = sharedManager({ e: config }, shared);
    const listed = (await first.listTools()).map((t) => t.name);
    expect(listed).toContain('mcp__e__echo');
    expect(starts()).toBe(1);
    const pid = first.status().e.pid!;
    await first.shutdown();
    // The daemon goes too: what it knows is on disk.
    await stopDaemon(shared);
    expect(await waitFor(() => !isAlive(pid), 5000, 20)).toBe(true);

    const fresh = sharedManager({ e: config }, shared);
    const ownCache = sharedManager({ e: config }, shared, { cacheDir: tempDir('lazy-mcp-other-cache-') });
    expect((await fresh.listTools()).map((t) => t.name)).toEqual(listed);
    expect((await ownCache.listTools()).map((t) => t.name)).toEqual(listed);
    expect((await fresh.serverInfo('e')).serverInfo.name).toBe('echo-server');
    expect(starts()).toBe(1);
    expect(fresh.status().e.pid).toBeUndefined();

    // A call needs the process: one start, for both clients; its pid is told to them.
    expect(textOf(await fresh.callTool('mcp__e__echo', { text: 'now' }))).toBe('now');
    expect(textOf(await ownCache.callTool('mcp__e__echo', { text: 'too' }))).toBe('too');
    expect(starts()).toBe(2);
    expect(fresh.status().e.pid).toBeGreaterThan(0);
    expect(ownCache.status().e.pid).toBe(fresh.status().e.pid);
  });

  it("is keyed by the whole fingerprint: another clientInfo's listing is the server's own", async () => {
    const shared = sharedOptions();
    const { config, starts } = counted('echo-server.mjs');
    await sharedManager({ e: config }, shared).listTools();
    expect(starts()).toBe(1);
    await sharedManager({ e: config }, shared, { clientInfo: { name: 'another-host', version: '2.0.0' } }).listTools();
    expect(starts()).toBe(2);
  });

  it('a cache entry that is out of date is corrected at the first start: every session hears list_changed', async () => {
    const shared = sharedOptions();
    const file = join(tempDir('lazy-mcp-tools-'), 'tools.json');
    writeFileSync(file, JSON.stringify({ tools: ['alpha'] }));
    const { config, starts } = counted('tools-from-file.mjs', file);
    const first = sharedManager({ t: config }, shared);
    expect(await toolNames(first)).toEqual(['mcp__t__alpha']);
    await first.shutdown();
    await stopDaemon(shared);

    writeFileSync(file, JSON.stringify({ tools: ['alpha', 'beta'] }));
    const [a, b] = [sharedManager({ t: config }, shared), sharedManager({ t: config }, shared)];
    expect(await toolNames(a)).toEqual(['mcp__t__alpha']);
    expect(await toolNames(b)).toEqual(['mcp__t__alpha']);
    const heard: string[] = [];
    b.on('toolsChanged', () => heard.push('b'));
    expect(textOf(await a.callTool('mcp__t__alpha'))).toBe('alpha');
    expect(starts()).toBe(2);
    expect(await waitFor(() => heard.length > 0)).toBe(true);
    let names: string[] = [];
    const deadline = Date.now() + 5000;
    while (names.length < 2 && Date.now() < deadline) names = await toolNames(b);
    expect(names).toEqual(['mcp__t__alpha', 'mcp__t__beta']);
  });
});
