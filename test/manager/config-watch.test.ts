import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

const echo = fixture('echo-server.mjs');
const config = (...names: string[]) => JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, echo])) }, null, 2);

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});

function watched(text: string) {
  const path = join(tempDir(), 'mcp.json');
  writeFileSync(path, text);
  const manager = McpServerManager.fromFile(path, { watch: { debounceMs: 50 } });
  managers.push(manager);
  const changes: ManagerEvents['configChanged'][] = [];
  const errors: ManagerEvents['configError'][] = [];
  manager.on('configChanged', (e) => changes.push(e));
  manager.on('configError', (e) => errors.push(e));
  return { path, manager, changes, errors };
}

describe('fromFile with watch', () => {
  it('reloads once for two quick edits, with the last one', async () => {
    const { path, manager, changes } = watched(config('a'));
    await manager.callServerTool('a', 'echo', { text: 'x' });
    const pid = manager.status().a.pid;
    writeFileSync(path, config('a', 'b'));
    writeFileSync(path, config('a', 'b', 'c'));
    expect(await waitFor(() => changes.length >= 1)).toBe(true);
    expect(changes[0]).toEqual({ added: ['b', 'c'], removed: [], changed: [], unchanged: ['a'] });
    expect(Object.keys(manager.status())).toEqual(['a', 'b', 'c']);
    expect(manager.status().a.pid).toBe(pid);
    // Saved the way editors do: a new file renamed over the old. The watch survives it.
    writeFileSync(`${path}.tmp`, config('a', 'c'));
    renameSync(`${path}.tmp`, path);
    expect(await waitFor(() => changes.length >= 2)).toBe(true);
    // Events are in order, so the two quick edits made exactly one reload.
    expect(changes).toHaveLength(2);
    expect(changes[1]).toMatchObject({ removed: ['b'], unchanged: ['a', 'c'] });
    expect(textOf(await manager.callTool('mcp__c__echo', { text: 'c' }))).toBe('c');
  });

  it('reports a half-written file and ignores it until it parses', async () => {
    const { path, manager, changes, errors } = watched(config('a'));
    writeFileSync(path, config('a', 'b').slice(0, 30));
    expect(await waitFor(() => errors.length >= 1)).toBe(true);
    expect(errors[0].path).toBe(path);
    expect(errors[0].error).toMatchObject({ code: 'invalid-config' });
    expect(errors[0].error.message).toContain(path);
    expect(Object.keys(manager.status())).toEqual(['a']);
    expect(changes).toEqual([]);
    writeFileSync(path, config('a', 'b'));
    expect(await waitFor(() => changes.length === 1)).toBe(true);
    expect(changes[0]).toMatchObject({ added: ['b'] });
  });

  it('makes an invalid entry invalid and keeps the rest', async () => {
    const { path, manager, changes } = watched(config('a'));
    writeFileSync(path, JSON.stringify({ mcpServers: { a: echo, b: { command: '' } } }));
    expect(await waitFor(() => changes.length === 1)).toBe(true);
    expect(manager.status().b).toMatchObject({ state: 'invalid', lastError: { code: 'invalid-config' } });
    expect(manager.status().a.state).toBe('idle');
  });

  it('rejects a debounce that is not a number of milliseconds, naming it', () => {
    const path = join(tempDir(), 'mcp.json');
    writeFileSync(path, config('a'));
    expect(() => McpServerManager.fromFile(path, { watch: { debounceMs: -1 } })).toThrow(
      'fromFile option `watch.debounceMs` must be a non-negative number of milliseconds, got -1 (number)',
    );
  });

  it('stops watching on shutdown', async () => {
    const { path, manager, changes, errors } = watched(config('a'));
    await manager.shutdown();
    writeFileSync(path, config('a', 'b'));
    // A window, not a wait for something: nothing may happen in it (the debounce is 50 ms).
    expect(await waitFor(() => changes.length + errors.length > 0, 500)).toBe(false);
  });
});
