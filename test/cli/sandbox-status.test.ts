import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/fixtures.js';
import { runCli, scratchDir } from './run-cli.js';

// `lazy-mcp status` on a sandboxed entry: it says the server is sandboxed, and with what.
let scratch: ReturnType<typeof scratchDir>;
let config: string;
beforeAll(() => {
  scratch = scratchDir();
  config = join(scratch.path, 'sandboxed.json');
  const server = { command: process.execPath, args: [join(repoRoot, 'test/fixtures/echo-server.mjs')], sandbox: { read: [scratch.path] } };
  writeFileSync(config, JSON.stringify({ mcpServers: { boxed: server } }));
});
afterAll(() => scratch.remove());

test('the table marks it sandboxed; --json gives the tool and the paths', async () => {
  const table = await runCli(['status', '--config', config]);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^boxed\s+ready \(sandboxed\)\s+\d+/m);
  const json = await runCli(['status', '--json', '--config', config]);
  expect(JSON.parse(json.stdout).boxed).toMatchObject({ state: 'ready', sandbox: { tool: 'bwrap', read: [scratch.path], write: [], network: false, env: [] } });
});

test('without bwrap on PATH the entry is invalid with sandbox-unavailable and how to install it; status fails', async () => {
  const run = await runCli(['status', '--json', '--config', config], { env: { PATH: '/nonexistent/bin' } });
  expect(run.code).toBe(1);
  expect(JSON.parse(run.stdout).boxed).toMatchObject({
    state: 'invalid',
    lastError: { code: 'sandbox-unavailable', message: expect.stringContaining('sudo apt-get install bubblewrap') },
  });
});
