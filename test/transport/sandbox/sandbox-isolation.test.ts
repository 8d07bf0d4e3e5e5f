import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpClient } from '../../../src/protocol/client.js';
import { DEFAULT_SANDBOX, type SandboxOptions } from '../../../src/transport/stdio/sandbox/policy.js';
import { fixture } from '../../support/fixtures.js';

// Real bwrap, real processes: the same probe server with and without its sandbox.
let home: string;
let outside: string;
let listener: Server;
let port: number;
const clients: McpClient[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'lazy-mcp-sandbox-home-'));
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_test'), 'PRIVATE KEY');
  outside = mkdtempSync(join(tmpdir(), 'lazy-mcp-sandbox-outside-'));
  writeFileSync(join(outside, 'note.txt'), 'a note');
  listener = createServer((socket) => socket.end('hello from the host\n'));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
  rmSync(home, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close(500)));
});

async function probe(sandbox: SandboxOptions | undefined): Promise<McpClient> {
  const config = { ...fixture('sandbox-probe.mjs'), env: { HOME: home }, ...(sandbox ? { sandbox } : {}) };
  const client = await McpClient.connect(config, { name: 'probe' });
  clients.push(client);
  return client;
}

async function answer(client: McpClient, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await client.callTool(tool, args);
  return (result.content[0] as { text: string }).text;
}

describe.each([
  ['without a sandbox', undefined, 'ok'],
  ['sandboxed', DEFAULT_SANDBOX, 'denied'],
] as const)('%s', (_label, sandbox, verdict) => {
  test(`reading ~/.ssh/id_test is ${verdict === 'ok' ? 'allowed' : 'denied'}`, async () => {
    const client = await probe(sandbox);
    expect(await answer(client, 'read_ssh_key')).toBe(verdict === 'ok' ? 'ok: PRIVATE KEY' : 'denied: ENOENT');
  });

  test(`writing outside the write paths is ${verdict === 'ok' ? 'allowed' : 'denied'}`, async () => {
    const client = await probe(sandbox);
    const target = join(outside, `written-${verdict}.txt`);
    expect(await answer(client, 'write_file', { path: target })).toMatch(verdict === 'ok' ? /^ok: written$/ : /^denied: (ENOENT|EROFS|EACCES)$/);
    expect(existsSync(target)).toBe(verdict === 'ok');
  });

  test(`the host's processes are ${verdict === 'ok' ? 'listed' : 'hidden'} in /proc`, async () => {
    const client = await probe(sandbox);
    expect(await answer(client, 'has_process', { pid: process.pid })).toMatch(verdict === 'ok' ? /^ok: listed among \d+$/ : /^denied: NOT-LISTED \([1-9] processes\)$/);
  });

  test(`a TCP connection to 127.0.0.1 is ${verdict === 'ok' ? 'allowed' : 'denied'}`, async () => {
    const client = await probe(sandbox);
    expect(await answer(client, 'connect', { port })).toMatch(verdict === 'ok' ? /^ok: hello from the host$/ : /^denied: (ECONNREFUSED|ENETUNREACH)$/);
  });
});

describe('what the sandbox lets through', () => {
  test('a read path is readable and not writable; a write path is both; the rest of its parent stays hidden', async () => {
    const readable = mkdtempSync(join(outside, 'read-'));
    const writable = mkdtempSync(join(outside, 'write-'));
    writeFileSync(join(readable, 'in.txt'), 'readable');
    const client = await probe({ ...DEFAULT_SANDBOX, read: [readable], write: [writable] });
    expect(await answer(client, 'read_file', { path: join(readable, 'in.txt') })).toBe('ok: readable');
    expect(await answer(client, 'write_file', { path: join(readable, 'new.txt') })).toMatch(/^denied: (EROFS|EACCES)$/);
    expect(await answer(client, 'write_file', { path: join(writable, 'out.txt'), text: 'from inside' })).toBe('ok: written');
    expect(readFileSync(join(writable, 'out.txt'), 'utf8')).toBe('from inside');
    expect(await answer(client, 'read_file', { path: join(outside, 'note.txt') })).toBe('denied: ENOENT');
  });

  test('a path listed under the home folder is there; the rest of the home is empty and private', async () => {
    const client = await probe({ ...DEFAULT_SANDBOX, read: [join(home, '.ssh')] });
    expect(await answer(client, 'read_ssh_key')).toBe('ok: PRIVATE KEY');
    expect(await answer(client, 'write_file', { path: join(home, 'scratch.txt') })).toBe('ok: written');
    expect(existsSync(join(home, 'scratch.txt'))).toBe(false);
  });

  test('the network when allowed', async () => {
    const client = await probe({ network: true });
    expect(await answer(client, 'connect', { port })).toBe('ok: hello from the host');
  });

  test('host variables only when listed in sandbox.env; /etc/shadow is empty', async () => {
    process.env.LAZY_MCP_SANDBOX_VAR = 'passed';
    process.env.LAZY_MCP_SANDBOX_SECRET = 'kept out';
    try {
      const client = await probe({ ...DEFAULT_SANDBOX, env: ['LAZY_MCP_SANDBOX_VAR'] });
      expect(await answer(client, 'env', { name: 'LAZY_MCP_SANDBOX_VAR' })).toBe('passed');
      expect(await answer(client, 'env', { name: 'LAZY_MCP_SANDBOX_SECRET' })).toBe('undefined');
      expect(await answer(client, 'env', { name: 'TMPDIR' })).toBe('/tmp');
      expect(await answer(client, 'read_file', { path: '/etc/shadow' })).toMatch(/^(ok: |denied: EACCES)$/);
    } finally {
      delete process.env.LAZY_MCP_SANDBOX_VAR;
      delete process.env.LAZY_MCP_SANDBOX_SECRET;
    }
  });
});
