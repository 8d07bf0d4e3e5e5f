import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dirs.js';
import { managersShutAfterEach } from '../support/managers.js';
import { fixture, isAlive, referenceServer, textOf, waitFor } from '../support/fixtures.js';
import { processTree } from '../transport/sandbox/process-tree.js';

// Sandboxed entries through the manager: real bwrap, the reference servers from node_modules.
const manage = managersShutAfterEach();

describe('the README recipes', () => {
  test('server-filesystem limited to one folder: reads, writes and lists inside it; status() says it is sandboxed and with what', async () => {
    const dir = realpathSync(tempDir('lazy-mcp-sandbox-fs-'));
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'hello.txt'), 'hello from inside\n');
    writeFileSync(join(dir, 'secret.txt'), 'outside the folder\n');
    const manager = manage({ filesystem: { ...referenceServer('filesystem', data), sandbox: { write: [data] } } });
    expect(textOf(await manager.callTool('mcp__filesystem__read_text_file', { path: join(data, 'hello.txt') }))).toContain('hello from inside');
    await manager.callTool('mcp__filesystem__write_file', { path: join(data, 'new.txt'), content: 'written inside' });
    expect(readFileSync(join(data, 'new.txt'), 'utf8')).toBe('written inside');
    expect(textOf(await manager.callTool('mcp__filesystem__list_directory', { path: data }))).toMatch(/hello\.txt[\s\S]*new\.txt/);
    expect(manager.status().filesystem).toMatchObject({ state: 'ready', sandbox: { tool: 'bwrap', read: [], write: [data], network: false, env: [] } });
  });

  test('server-memory with its file in a write path: the graph lands on the host', async () => {
    const dir = realpathSync(tempDir('lazy-mcp-sandbox-memory-'));
    const file = join(dir, 'memory.jsonl');
    const manager = manage({ memory: { ...referenceServer('memory'), env: { MEMORY_FILE_PATH: file }, sandbox: { write: [dir] } } });
    await manager.callTool('mcp__memory__create_entities', { entities: [{ name: 'lazy-mcp', entityType: 'project', observations: ['runs servers sandboxed'] }] });
    expect(textOf(await manager.callTool('mcp__memory__read_graph'))).toContain('runs servers sandboxed');
    expect(existsSync(file) && readFileSync(file, 'utf8')).toContain('runs servers sandboxed');
  });
});

describe('a sandboxed entry', () => {
  test('idle stop leaves no process: not bwrap, not the server', async () => {
    const manager = manage({ echo: { ...fixture('echo-server.mjs'), sandbox: true, idleTimeout: 300 } });
    expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'a' }))).toBe('a');
    const pid = manager.status().echo.pid!;
    const tree = processTree(pid);
    expect(tree.length).toBeGreaterThanOrEqual(3);
    expect(await waitFor(() => manager.status().echo.state === 'stopped', 5000)).toBe(true);
    expect(await waitFor(() => tree.every((p) => !isAlive(p)), 3000)).toBe(true);
  });

  test('shutdown leaves no process', async () => {
    const manager = manage({ echo: { ...fixture('echo-server.mjs'), sandbox: true } });
    await manager.callTool('mcp__echo__echo', { text: 'a' });
    const tree = processTree(manager.status().echo.pid!);
    await manager.shutdown();
    expect(tree.filter(isAlive)).toEqual([]);
  });

  test('a sandboxed npx without network fails at once saying the package is not cached, instead of hanging', async () => {
    const manager = manage({ runner: { command: 'npx', args: ['-y', '@lazy-mcp-test/never-published@1.0.0'], sandbox: true, timeout: 60_000 } });
    const t0 = Date.now();
    const error = await manager.callTool('mcp__runner__anything').catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(error).toMatchObject({ code: 'peer-exited', message: expect.stringMatching(/ENOTCACHED/) });
    expect((error as Error).message).toMatch(/npx ran in a sandbox without network, .*"sandbox": \{ "network": true, "write": \["~\/\.npm"\] \}/);
  });
});
