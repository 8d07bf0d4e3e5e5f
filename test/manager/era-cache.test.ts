import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { ERA_VERDICT_MAX_AGE_MS } from '../../src/manager/catalog/tool-catalog.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

// The era a server speaks is found once per server config and kept with its manifest cache entry.
describe('era cached with the manifest', () => {
  const dir = tempDir('lazy-mcp-era-');
  const cacheDir = join(dir, 'cache');
  const record = join(dir, 'methods.txt');
  const config = { mcpServers: { modern: fixture('sdk2-modern-server.mjs', record, '--ttl=60000') } };
  const methods = () => readFileSync(record, 'utf8').split('\n').filter(Boolean);
  const entry = () => {
    const file = readdirSync(cacheDir).find((f) => f.startsWith('modern-'));
    return file ? (JSON.parse(readFileSync(join(cacheDir, file), 'utf8')) as { era?: string; tools: unknown[] }) : undefined;
  };

  it('probes a 2026-only server at its first start, and not at the next start of a new manager', async () => {
    const first = McpServerManager.fromConfig(config, { cacheDir });
    try {
      await first.listTools();
      expect(await waitFor(() => entry()?.era === '2026', 5000)).toBe(true);
    } finally {
      await first.shutdown();
    }
    expect(methods()).toEqual(['initialize', 'server/discover', 'subscriptions/listen', 'tools/list']);

    writeFileSync(record, '');
    const second = McpServerManager.fromConfig(config, { cacheDir });
    try {
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__echo');
      // Listed from the cache: nothing started yet.
      expect(second.status().modern.pid).toBeUndefined();
      expect(textOf(await second.callTool('mcp__modern__echo', { text: 'again' }))).toBe('again');
      expect(second.status().modern).toMatchObject({ era: '2026', protocolVersion: '2026-07-28' });
    } finally {
      await second.shutdown();
    }
    expect(methods()).not.toContain('initialize');
    // The cached tools stand until the live listing, sent after the call, lands.
    expect(methods()).toEqual(['server/discover', 'subscriptions/listen', 'tools/call', 'tools/list']);
  });

  it('probes again when the verdict is over a week old, or was made with another server version', async () => {
    const write = (patch: Record<string, unknown>) => {
      const file = readdirSync(cacheDir).find((f) => f.startsWith('modern-'))!;
      writeFileSync(join(cacheDir, file), JSON.stringify({ ...entry(), ...patch }));
    };
    const startOnce = async () => {
      writeFileSync(record, '');
      const manager = McpServerManager.fromConfig(config, { cacheDir });
      try {
        await manager.listTools();
        await manager.callTool('mcp__modern__echo', { text: 'x' });
      } finally {
        await manager.shutdown();
      }
      return methods()[0];
    };
    expect(await startOnce()).toBe('server/discover');
    write({ eraCheckedAt: new Date(Date.now() - ERA_VERDICT_MAX_AGE_MS - 60_000).toISOString() });
    expect(await startOnce()).toBe('initialize');
    // That probe dated the verdict anew.
    expect(await startOnce()).toBe('server/discover');
    // A start trusting the verdict meets another version: the one after it probes.
    write({ serverVersion: '0.0.1' });
    expect(await startOnce()).toBe('server/discover');
    expect(await startOnce()).toBe('initialize');
    expect(await startOnce()).toBe('server/discover');
  });

  it('keeps the era found for a restart within the same manager (no cache needed)', async () => {
    writeFileSync(record, '');
    const manager = McpServerManager.fromConfig(config);
    try {
      await manager.listTools();
      expect(methods()).toEqual(['initialize', 'server/discover', 'subscriptions/listen', 'tools/list']);
      writeFileSync(record, '');
      await manager.restart('modern');
      await manager.callTool('mcp__modern__echo', { text: 'x' });
      expect(methods()[0]).toBe('server/discover');
      expect(methods()).not.toContain('initialize');
    } finally {
      await manager.shutdown();
    }
  });
});

describe('a stale era hint', () => {
  it('costs one failed start at most: the next start probes again', async () => {
    const dir = tempDir('lazy-mcp-era-stale-');
    const cacheDir = join(dir, 'cache');
    const modeFile = join(dir, 'mode');
    writeFileSync(modeFile, 'modern');
    const config = { mcpServers: { s: fixture('changes-era.mjs', modeFile) } };
    const first = McpServerManager.fromConfig(config, { cacheDir });
    try {
      expect((await first.listTools()).map((t) => t.name)).toContain('mcp__s__echo');
      expect(first.status().s.era).toBe('2026');
    } finally {
      await first.shutdown();
    }
    // Same config, now a legacy server that exits on server/discover.
    writeFileSync(modeFile, 'legacy');
    const second = McpServerManager.fromConfig(config, { cacheDir });
    try {
      await second.listTools();
      await expect(second.callTool('mcp__s__echo', { text: 'x' })).rejects.toMatchObject({ code: 'peer-exited' });
      await second.restart('s');
      expect(textOf(await second.callTool('mcp__s__echo', { text: 'back' }))).toBe('back');
      expect(second.status().s.era).toBe('legacy');
    } finally {
      await second.shutdown();
    }
  });
});
