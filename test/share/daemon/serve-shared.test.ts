import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { daemonStatus } from '../../../src/share/daemon/control.js';
import { cliPath, fixtureConfig, runNode } from '../../cli/run-cli.js';
import { isAlive, textOf, waitFor } from '../../support/fixtures.js';
import { processesWith, sharedOptions } from './support.js';

const transports: StdioClientTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

async function serveClient(env: Record<string, string>, ...args: string[]): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'serve', '--config', fixtureConfig('gateway-two.json'), ...args], env, stderr: 'pipe' });
  transports.push(transport);
  const client = new Client({ name: 'shared-serve-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

describe('lazy-mcp serve (stdio) shares servers through the pool daemon by default', () => {
  it('two serve sessions: one server process for both, in the daemon; daemon status and stop', async () => {
    const shared = sharedOptions();
    const env = { PATH: process.env.PATH ?? '', LAZY_MCP_RUNTIME_DIR: shared.runtimeDir };
    const sessions = await Promise.all([serveClient(env), serveClient(env)]);
    const results = await Promise.all(sessions.map(({ client }, i) => client.callTool({ name: 'mcp__one__echo', arguments: { text: `s${i}` } })));
    expect(results.map((r) => textOf(r as { content: unknown[] }))).toEqual(['s0', 's1']);
    // "one" and "two" are the same entry: one process serves both names of both sessions.
    await sessions[0].client.callTool({ name: 'mcp__two__echo', arguments: { text: 'x' } });
    const status = (await daemonStatus(shared))!;
    expect(status.servers).toHaveLength(1);
    expect(status.servers[0].sessions).toBe(3);
    expect(processesWith('echo-server.mjs', 'test/fixtures')).toContain(status.servers[0].pid);

    const shown = await runNode(cliPath, ['daemon', 'status', '--json'], { env: { LAZY_MCP_RUNTIME_DIR: shared.runtimeDir } });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ pid: status.pid, servers: [{ fingerprint: status.servers[0].fingerprint, pid: status.servers[0].pid }] });
    const table = await runNode(cliPath, ['daemon', 'status'], { env: { LAZY_MCP_RUNTIME_DIR: shared.runtimeDir } });
    expect(table.stdout).toMatch(/SERVER\s+FINGERPRINT\s+PID\s+STATE\s+SESSIONS\s+MEMORY/);

    const stopped = await runNode(cliPath, ['daemon', 'stop'], { env: { LAZY_MCP_RUNTIME_DIR: shared.runtimeDir } });
    expect(stopped.stderr).toContain(`stopped (pid ${status.pid})`);
    expect(await waitFor(() => !isAlive(status.pid) && !isAlive(status.servers[0].pid!), 5000, 20)).toBe(true);
    const none = await runNode(cliPath, ['daemon', 'status'], { env: { LAZY_MCP_RUNTIME_DIR: shared.runtimeDir } });
    expect(none.stdout).toBe('not running\n');
    // The sessions' next call starts a new daemon.
    const again = await sessions[1].client.callTool({ name: 'mcp__one__echo', arguments: { text: 'again' } });
    expect(textOf(again as { content: unknown[] })).toBe('again');
  }, 90_000);

  it('--no-shared keeps the servers in the serve process, as before', async () => {
    const shared = sharedOptions();
    const { client, pid } = await serveClient({ PATH: process.env.PATH ?? '', LAZY_MCP_RUNTIME_DIR: shared.runtimeDir }, '--no-shared');
    await client.callTool({ name: 'mcp__one__echo', arguments: { text: 'x' } });
    expect(await daemonStatus(shared)).toBeUndefined();
    const servers = processesWith('echo-server.mjs', 'test/fixtures').filter((p) => {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    });
    expect(servers).toHaveLength(1);
  }, 60_000);
});
