import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { serveGateway } from '../../src/gateway/serve-gateway.js';
import { fixture } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';
import { fixtureConfig, serveEach } from './run-cli.js';

/** `lazy-mcp serve …` in a child: resolves with its URL once listening, or with its exit status if it ends first. */
const serve = serveEach();

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: initialize });

describe('lazy-mcp serve --http: the gateway token (item 8)', () => {
  it('reads it from --token-file, not from argv, and refuses requests without it', async () => {
    const file = join(tempDir(), 'token');
    writeFileSync(file, 'from-a-file\n', { mode: 0o600 });
    const { url, stderr } = await serve(['--http', '--port', '0', '--token-file', file, '--config', fixtureConfig('gateway-two.json')]);
    expect(url).toBeDefined();
    expect((await post(url!)).status).toBe(401);
    expect((await post(url!, { authorization: 'Bearer from-a-file' })).status).toBe(200);
    expect(stderr()).not.toMatch(/warning/);
  });

  it('reads it from LAZY_MCP_TOKEN', async () => {
    const { url } = await serve(['--http', '--port', '0', '--config', fixtureConfig('gateway-two.json')], { LAZY_MCP_TOKEN: 'from-the-env' });
    expect((await post(url!, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(url!, { authorization: 'Bearer from-the-env' })).status).toBe(200);
  });

  it('warns that --token is visible to other users, and that a token file others can read is no secret', async () => {
    const { url, stderr } = await serve(['--http', '--port', '0', '--token', 'on-argv', '--config', fixtureConfig('gateway-two.json')]);
    expect((await post(url!, { authorization: 'Bearer on-argv' })).status).toBe(200);
    expect(stderr()).toContain('warning: --token is visible to every local user in the process list; prefer --token-file FILE or the LAZY_MCP_TOKEN variable');

    const file = join(tempDir(), 'token');
    writeFileSync(file, 'shared\n');
    chmodSync(file, 0o644);
    const second = await serve(['--http', '--port', '0', '--token-file', file, '--config', fixtureConfig('gateway-two.json')]);
    expect(second.stderr()).toContain(`warning: the token file ${file} can be read by other users (mode 644); chmod 600 it`);
  });

  it('refuses an empty token file and two sources at once', async () => {
    const file = join(tempDir(), 'token');
    writeFileSync(file, '\n', { mode: 0o600 });
    const empty = await serve(['--http', '--port', '0', '--token-file', file, '--config', fixtureConfig('gateway-two.json')]);
    expect(empty.exit).toBe(2);
    expect(empty.stderr()).toContain(`--token-file ${JSON.stringify(file)} gives an empty token`);
    const both = await serve(['--http', '--port', '0', '--token-file', file, '--token', 'x', '--config', fixtureConfig('gateway-two.json')]);
    expect(both.exit).toBe(2);
    expect(both.stderr()).toContain('give either --token or --token-file, not both');
  });
});

describe('lazy-mcp serve --http beyond loopback (item 9)', () => {
  it('refuses --host 0.0.0.0 without a token, before starting anything', async () => {
    const { url, exit, stderr } = await serve(['--http', '--port', '0', '--host', '0.0.0.0', '--config', fixtureConfig('gateway-two.json')]);
    expect(url).toBeUndefined();
    expect(exit).toBe(2);
    expect(stderr()).toContain('refusing to listen on 0.0.0.0 without a token');
  });

  it('refuses "gateway": { "host": "0.0.0.0" } from the config without a token', async () => {
    const config = join(tempDir(), 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: {}, gateway: { host: '0.0.0.0' } }));
    const { url, exit, stderr } = await serve(['--http', '--port', '0', '--config', config]);
    expect(url).toBeUndefined();
    expect(exit).toBe(2);
    expect(stderr()).toContain(`refusing to listen on 0.0.0.0 (gateway.host in ${config}) without a token`);
  });

  it('listens beyond loopback with a token, and still on any loopback address without one', async () => {
    const withToken = await serve(['--http', '--port', '0', '--host', '0.0.0.0', '--config', fixtureConfig('gateway-two.json')], { LAZY_MCP_TOKEN: 't0ken' });
    expect(withToken.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/mcp$/);
    const port = new URL(withToken.url!).port;
    expect((await post(`http://127.0.0.1:${port}/mcp`)).status).toBe(401);
    expect((await post(`http://127.0.0.1:${port}/mcp`, { authorization: 'Bearer t0ken' })).status).toBe(200);
    const loopback = await serve(['--http', '--port', '0', '--host', '127.0.0.2', '--config', fixtureConfig('gateway-two.json')]);
    expect((await post(loopback.url!)).status).toBe(200);
  });

  it('serveGateway refuses it too, for embedders', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs') } });
    try {
      const error = await serveGateway(manager, { transport: 'http', http: { host: '0.0.0.0' } }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid-config' });
      expect((error as Error).message).toMatch(/^refusing to listen on 0\.0\.0\.0 without a token/);
    } finally {
      await manager.shutdown();
    }
  });
});
