import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { parseConfig } from '../../src/manager/config/config.js';
import { runCli } from '../cli/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const SECRET = 'k-9f8e7d6c5b4a';
const PASSWORD = 'pa55w0rd-xyz';

let server: Server;
let port: number;
beforeAll(async () => {
  // Answers every request 500, echoing nothing: the failures name the URL.
  server = createServer((_req, res) => res.writeHead(500).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const entry = () => ({ type: 'http', url: `http://bob:${PASSWORD}@127.0.0.1:${port}/mcp?api_key=\${LAZY_TEST_KEY}&team=core` });

describe('URLs are shown without secrets (item 7)', () => {
  it('the resolved entry carries the URL to show: userinfo and ${VAR} values as ***', () => {
    const [parsed] = parseConfig({ mcpServers: { web: entry() } }, { LAZY_TEST_KEY: SECRET });
    if (parsed.kind !== 'http') throw new Error('expected an http entry');
    expect(parsed.config.url).toContain(SECRET);
    expect(parsed.config.shownUrl).toBe(`http://***@127.0.0.1:${port}/mcp?api_key=***&team=core`);
  });

  it('status() and the errors of a failing server quote neither the password nor the expanded key', async () => {
    process.env.LAZY_TEST_KEY = SECRET;
    const manager = McpServerManager.fromConfig({ mcpServers: { web: entry() } });
    try {
      const error = await manager.callTool('mcp__web__x').then(() => undefined, (e: unknown) => e);
      const said = `${(error as Error).message}\n${JSON.stringify(manager.status())}`;
      expect(said).toContain(`http://***@127.0.0.1:${port}/mcp?api_key=***&team=core`);
      expect(said).not.toContain(SECRET);
      expect(said).not.toContain(PASSWORD);
    } finally {
      delete process.env.LAZY_TEST_KEY;
      await manager.shutdown();
    }
  });

  it('lazy-mcp status prints neither', async () => {
    const config = join(tempDir(), 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { web: entry() } }));
    for (const args of [['status'], ['status', '--json']]) {
      const run = await runCli([...args, '--config', config], { env: { LAZY_TEST_KEY: SECRET } });
      const said = run.stdout + run.stderr;
      expect(said).toContain('127.0.0.1');
      expect(said).not.toContain(SECRET);
      expect(said).not.toContain(PASSWORD);
    }
  });
});
