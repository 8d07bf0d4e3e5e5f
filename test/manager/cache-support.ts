import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

/** One server, `s`, with one tool, `a`: the entry the manifest-cache tests write and plant. */
export const config = { mcpServers: { s: fixture('named-tools.mjs', '["a"]') } };

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});

/** A manager the test's end shuts down. */
export function track(manager: McpServerManager): McpServerManager {
  managers.push(manager);
  return manager;
}

/** A manager over `cacheDir`, with the logs it emits and the servers it starts. */
export function manage(cacheDir: string) {
  const manager = track(McpServerManager.fromConfig(config, { cacheDir }));
  const logs: ManagerEvents['log'][] = [];
  const starts: string[] = [];
  manager.on('log', (e) => logs.push(e));
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  return { manager, logs, starts };
}

export const jsonFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.json'));

/** A cache folder holding one good entry for `s`, and that entry's path. */
export async function primed(): Promise<{ dir: string; file: string }> {
  const dir = tempDir();
  const first = manage(dir);
  await first.manager.listTools();
  expect(await waitFor(() => jsonFiles(dir).length === 1, 5000)).toBe(true);
  await first.manager.shutdown();
  return { dir, file: join(dir, jsonFiles(dir)[0]) };
}
