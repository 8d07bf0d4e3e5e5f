import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { fixture, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

// A 2026 server's lists carry `ttlMs` / `cacheScope`: how long the pool may reuse them, and for whom.
describe('cache hints of 2026 servers', () => {
  const dir = tempDir('lazy-mcp-hints-');
  let n = 0;
  /** A fresh cache folder and method record per test, and a config running the SDK v2 server with `flags`. */
  function setup(...flags: string[]) {
    n++;
    const cacheDir = join(dir, `cache-${n}`);
    const record = join(dir, `methods-${n}.txt`);
    writeFileSync(record, '');
    const config = { mcpServers: { modern: fixture('sdk2-modern-server.mjs', record, ...flags) } };
    const methods = () => readFileSync(record, 'utf8').split('\n').filter(Boolean);
    const entryFile = () => {
      const file = readdirSync(cacheDir).find((f) => f.startsWith('modern-'));
      return file && join(cacheDir, file);
    };
    const entry = () => {
      const file = entryFile();
      return file ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : undefined;
    };
    return { cacheDir, config, methods, record, entry, entryFile };
  }
  const listCount = (methods: string[]) => methods.filter((m) => m === 'tools/list').length;

  it('serves a list within its ttlMs from the cache: a new manager spawns nothing', async () => {
    const { cacheDir, config, entry } = setup('--ttl=60000');
    const first = McpServerManager.fromConfig(config, { cacheDir });
    await first.listTools().finally(() => first.shutdown());
    expect(entry()?.freshness).toMatchObject({ tools: { scope: 'public' } });

    const second = McpServerManager.fromConfig(config, { cacheDir });
    try {
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__echo');
      expect(second.status().modern.pid).toBeUndefined();
    } finally {
      await second.shutdown();
    }
  });

  it('serves a cached list past its ttlMs (ttlMs: 0, the SDK default) without starting the server, and lists again at its next start', async () => {
    const { cacheDir, config, methods, record } = setup();
    const first = McpServerManager.fromConfig(config, { cacheDir });
    await first.listTools().finally(() => first.shutdown());

    writeFileSync(record, '');
    const second = McpServerManager.fromConfig(config, { cacheDir });
    const changed: string[] = [];
    second.on('toolsChanged', ({ server }) => changed.push(server));
    try {
      for (let i = 0; i < 3; i++) expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__echo');
      expect((await second.listPrompts()).map((p) => p.server)).toEqual([]);
      expect(second.status().modern.pid).toBeUndefined();
      expect(methods()).toEqual([]);
      // A call is the next real start: it lists again (revalidates) before the call goes out.
      await second.callTool('mcp__modern__add_tool', { name: 'added' });
      // Counted up to the call: the tool it adds makes the server announce a change, listed again at any moment after.
      const seen = methods();
      expect(listCount(seen.slice(0, seen.indexOf('tools/call')))).toBe(1);
      // Running now, the server's ttlMs: 0 has a listing fetched again over its connection.
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__added');
      expect(changed).toContain('modern');
    } finally {
      await second.shutdown();
    }
  });

  it('with cacheHints "strict", lists again a cached list past its ttlMs, starting the server', async () => {
    const { cacheDir, config, methods, record } = setup();
    const first = McpServerManager.fromConfig(config, { cacheDir });
    await first.listTools().finally(() => first.shutdown());

    writeFileSync(record, '');
    const second = McpServerManager.fromConfig(config, { cacheDir, cacheHints: 'strict' });
    try {
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__echo');
      expect(second.status().modern.pid).toBeGreaterThan(0);
      // The start's own listing answers this request: it is not listed twice.
      expect(listCount(methods())).toBe(1);
    } finally {
      await second.shutdown();
    }
  });

  it('with cacheHints "ignore", keeps a cached list until it is invalidated, whatever its ttlMs', async () => {
    const { cacheDir, config } = setup();
    const first = McpServerManager.fromConfig(config, { cacheDir });
    await first.listTools().finally(() => first.shutdown());

    const second = McpServerManager.fromConfig(config, { cacheDir, cacheHints: 'ignore' });
    try {
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__echo');
      expect(second.status().modern.pid).toBeUndefined();
    } finally {
      await second.shutdown();
    }
  });

  it('lists a running server again over its connection once the list is stale, and not while it is fresh', async () => {
    const stale = setup();
    const manager = McpServerManager.fromConfig(stale.config);
    try {
      await manager.listTools();
      const pid = manager.status().modern.pid;
      await manager.listTools();
      await manager.listTools();
      expect(listCount(stale.methods())).toBe(3);
      expect(manager.status().modern.pid).toBe(pid);
    } finally {
      await manager.shutdown();
    }

    const fresh = setup('--ttl=60000');
    const other = McpServerManager.fromConfig(fresh.config);
    try {
      await other.listTools();
      await other.listTools();
      await other.listTools();
      expect(listCount(fresh.methods())).toBe(1);
    } finally {
      await other.shutdown();
    }
  });

  it('lists again when a short ttlMs has passed', async () => {
    const { config, methods } = setup('--ttl=300');
    const manager = McpServerManager.fromConfig(config);
    try {
      await manager.listTools();
      const listedAt = Date.now();
      await manager.listTools();
      expect(listCount(methods())).toBe(1);
      expect(await waitFor(() => Date.now() > listedAt + 300, 2000)).toBe(true);
      await manager.listTools();
      expect(listCount(methods())).toBe(2);
    } finally {
      await manager.shutdown();
    }
  });

  it('with cacheHints "strict", serves a stale list, with a log, when the server cannot be started to list it again', async () => {
    const modeFile = join(dir, 'mode');
    writeFileSync(modeFile, 'modern');
    const cacheDir = join(dir, 'cache-stale-served');
    const config = { mcpServers: { s: fixture('changes-era.mjs', modeFile, '0') } };
    const first = McpServerManager.fromConfig(config, { cacheDir });
    await first.listTools().finally(() => first.shutdown());

    // Same config, now a server that dies at once.
    writeFileSync(modeFile, 'legacy');
    const second = McpServerManager.fromConfig(config, { cacheDir, cacheHints: 'strict' });
    const logs: ManagerEvents['log'][] = [];
    second.on('log', (e) => logs.push(e));
    try {
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__s__echo');
      expect(logs.some((l) => l.logger === 'cache' && /stale tools list/.test(String(l.data)))).toBe(true);
    } finally {
      await second.shutdown();
    }
  });

  it('refuses an unknown cacheHints mode, naming the value', () => {
    expect(() => McpServerManager.fromConfig({ mcpServers: {} }, { cacheHints: 'always' as never })).toThrow(/cacheHints.*"revalidate", "strict" or "ignore".*always/);
  });

  it('never serves a private list to another authorization context', async () => {
    const { cacheDir, config, entry, entryFile } = setup('--ttl=60000', '--private');
    const first = McpServerManager.fromConfig(config, { cacheDir });
    await first.listTools().finally(() => first.shutdown());
    expect(entry()?.freshness).toMatchObject({ tools: { scope: 'private' } });

    // The entry now claims it was made with another token than this pool's (none, on stdio).
    writeFileSync(entryFile()!, JSON.stringify({ ...entry(), context: 'another-token' }));
    const second = McpServerManager.fromConfig(config, { cacheDir });
    try {
      expect((await second.listTools()).map((t) => t.name)).toContain('mcp__modern__echo');
      expect(second.status().modern.pid).toBeGreaterThan(0);
    } finally {
      await second.shutdown();
    }
  });
});
