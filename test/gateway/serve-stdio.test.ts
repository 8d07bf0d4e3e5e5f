import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cliPath, fixtureConfig, runNode } from '../cli/run-cli.js';
import { isAlive, textOf, waitFor } from '../support/fixtures.js';

/** Live fixture server processes whose parent is `pid` (not the reaper), with their command lines. */
function childrenOf(pid: number): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== pid || fields[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes('test/fixtures/')) found.push({ pid: Number(entry), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const transports: StdioClientTransport[] = [];
const spawned: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  for (const child of spawned.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function startServe(args: string[], era: 'legacy' | '2026'): Promise<{ client: Client; transport: StdioClientTransport; pid: number }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'serve', ...args], stderr: 'pipe' });
  transports.push(transport);
  const client = new Client({ name: 'stdio-test', version: '1.0.0' }, era === '2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(transport);
  return { client, transport, pid: transport.pid! };
}

describe.each(['legacy', '2026'] as const)('lazy-mcp serve on stdio (%s era)', (era) => {
  it('starts nothing until asked, starts only the called server, and closing stdin stops every backend and the gateway', async () => {
    const { client, transport, pid } = await startServe(['--config', fixtureConfig('gateway-two.json')], era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === '2026' ? '2026-07-28' : '2025-11-25');
    expect(childrenOf(pid)).toEqual([]);
    const result = await client.callTool({ name: 'mcp__one__echo', arguments: { text: 'through the gateway' } });
    expect(textOf(result as { content: unknown[] })).toBe('through the gateway');
    const backends = childrenOf(pid);
    expect(backends).toHaveLength(1);
    expect(backends[0].cmd).toContain('echo-server.mjs');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__one__echo', 'mcp__two__echo']));
    const all = childrenOf(pid).map((c) => c.pid);
    expect(all).toHaveLength(2);

    // The client going away closes our stdin: the gateway stops every backend and exits.
    await transport.close();
    expect(await waitFor(() => all.every((p) => !isAlive(p)) && !isAlive(pid), 10000, 50)).toBe(true);
  });
});

describe('lazy-mcp serve --search', () => {
  it('lists the search and call tools and calls a tool through them', async () => {
    const { client } = await startServe(['--config', fixtureConfig('gateway-two.json'), '--search'], 'legacy');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    const result = await client.callTool({ name: 'call_tool', arguments: { name: 'mcp__two__add', arguments: { a: 2, b: 3 } } });
    expect(textOf(result as { content: unknown[] })).toBe('5');
  });

  it('takes search mode from the config file too', async () => {
    const { client } = await startServe(['--config', fixtureConfig('gateway-search.json')], 'legacy');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
  });
});

describe('lazy-mcp serve: every exit path stops the backends', () => {
  /** The CLI spawned by hand, so the test alone decides how it ends; one backend started by a call. */
  async function servingWithBackend() {
    const child = spawn(process.execPath, [cliPath, 'serve', '--config', fixtureConfig('gateway-two.json')], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    spawned.push(child);
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'mcp__one__echo', arguments: { text: 'raw' } } });
    expect(await waitFor(() => stdout.includes('"id":2'), 15000, 20)).toBe(true);
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: number; result?: { protocolVersion?: string; content?: unknown[] } });
    expect(answers[0].result?.protocolVersion).toBe('2025-06-18');
    expect(answers[1].result?.content).toEqual([{ type: 'text', text: 'raw' }]);
    const backends = childrenOf(child.pid!).map((c) => c.pid);
    expect(backends).toHaveLength(1);
    return { child, exited, backends };
  }

  it('stdin EOF: the gateway exits on its own with status 0', async () => {
    const { child, exited, backends } = await servingWithBackend();
    child.stdin.end();
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(await waitFor(() => backends.every((p) => !isAlive(p)), 5000, 20)).toBe(true);
  });

  it('SIGTERM: the gateway stops its backends and exits', async () => {
    const { child, exited, backends } = await servingWithBackend();
    child.kill('SIGTERM');
    await exited;
    expect(await waitFor(() => backends.every((p) => !isAlive(p)), 5000, 20)).toBe(true);
  });

  it('SIGKILL of the gateway: its backends are gone within a few seconds all the same', async () => {
    const { child, exited, backends } = await servingWithBackend();
    child.kill('SIGKILL');
    await exited;
    expect(await waitFor(() => backends.every((p) => !isAlive(p)), 5000, 20)).toBe(true);
  });
});

describe('lazy-mcp serve with the SDK v1 client', () => {
  it('serves a 1.x client on stdio: public names, a call with progress', async () => {
    const { Client: V1Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport: V1Stdio } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new V1Stdio({ command: process.execPath, args: [cliPath, 'serve', '--config', fixtureConfig('gateway-two.json')], stderr: 'pipe' });
    const client = new V1Client({ name: 'v1', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__one__echo', 'mcp__two__add']));
      const seen: number[] = [];
      const result = await client.callTool({ name: 'mcp__one__slow', arguments: { ms: 300, interval: 100 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
      expect(textOf(result as { content: unknown[] })).toBe('done');
      // The 1.x client runs progress handlers a microtask late and drops the handler when the
      // answer comes, so a progress read in the same chunk as the answer is lost there: only
      // the early ones are certain.
      expect(seen[0]).toBe(1);
    } finally {
      await client.close();
    }
  });
});

describe('lazy-mcp serve: a backend asks a 2026 client (SDK v2, elicitation handler) through input_required rounds', () => {
  it('a legacy and a 2026 backend each elicit during a call; the answer reaches the same backend call', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'serve', '--config', fixtureConfig('gateway-asks.json')], stderr: 'pipe' });
    transports.push(transport);
    const client = new Client({ name: 'stdio-mrtr', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => (asked.push(String(request.params.message)), { action: 'accept', content: { name: 'Ada', sure: true } }));
    await client.connect(transport);
    const legacy = await client.callTool({ name: 'mcp__hf__ask', arguments: { message: 'Name?' } });
    expect(JSON.parse(textOf(legacy as { content: unknown[] }))).toMatchObject({ result: { action: 'accept', content: { name: 'Ada' } } });
    const modern = await client.callTool({ name: 'mcp__sdk__confirm', arguments: { what: 'ship' } });
    expect(textOf(modern as { content: unknown[] })).toBe('accept: {"name":"Ada","sure":true} state=state for ship');
    expect(asked).toEqual(['Name?', 'Really ship?']);
  });
});

describe('lazy-mcp serve: completion with the SDK v1 client', () => {
  it('completes a prompt argument (public name) and a resource template variable from the backend', async () => {
    const { Client: V1Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport: V1Stdio } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new V1Stdio({ command: process.execPath, args: [cliPath, 'serve', '--config', fixtureConfig('gateway-completes.json')], stderr: 'pipe' });
    const client = new V1Client({ name: 'v1', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()).toMatchObject({ completions: {} });
      const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'mcp__paint__paint' }, argument: { name: 'color', value: 'ro' } });
      expect(prompt.completion.values).toEqual(['rose']);
      const template = await client.complete({ ref: { type: 'ref/resource', uri: 'paint://{color}' }, argument: { name: 'color', value: 'r' } });
      expect(template.completion.values).toEqual(['red', 'rose', 'ruby']);
    } finally {
      await client.close();
    }
  });
});

describe('lazy-mcp serve usage', () => {
  it('prints its help on stdout when asked, and refuses an unknown option with status 2, leaving stdout to MCP', async () => {
    const help = await runNode(cliPath, ['serve', '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('lazy-mcp serve');
    const bad = await runNode(cliPath, ['serve', '--nope']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain("Unknown option '--nope'");
  });
});
