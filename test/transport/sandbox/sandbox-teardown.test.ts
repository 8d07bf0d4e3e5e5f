import { spawn } from 'node:child_process';
import { McpClient } from '../../../src/protocol/client.js';
import { DEFAULT_SANDBOX } from '../../../src/transport/stdio/sandbox/policy.js';
import { safeEnvironment } from '../../../src/transport/stdio/child-env.js';
import { ServerProcess } from '../../../src/transport/stdio/server-process.js';
import { fixture as fixtureConfig, killLeftovers } from '../../support/fixtures.js';
import { fixture, isGone, lineReader, waitUntil } from '../process-probes.js';
import { commandOf, processTree } from './process-tree.js';

// Through the sandbox the guarantees are the same: bwrap, the server and whatever the
// server started are all gone after a close, a crash or the host's SIGKILL.
const GONE_WITHIN_MS = 2500;
const leftovers: number[] = [];

afterEach(() => killLeftovers(leftovers));

/** bwrap, the sandbox's first process, the server and `more` processes below it, once they all run. */
async function treeOf(pid: number, more = 0): Promise<number[]> {
  let tree: number[] = [];
  await waitUntil(() => (tree = processTree(pid)).length >= 3 + more, 5000, `the sandbox of ${pid} to run ${3 + more} processes`);
  leftovers.push(...tree);
  return tree;
}

const alive = (tree: number[]) => tree.filter((pid) => !isGone(pid)).map((pid) => `${pid} ${commandOf(pid)}`);

async function readyServer(name: string): Promise<ServerProcess> {
  const server = await ServerProcess.spawn({ name, command: process.execPath, args: [fixture(`${name}.mjs`)], sandbox: true });
  await lineReader(server.stdout).next(10_000);
  return server;
}

describe('a sandboxed server', () => {
  test('close() of one that ignores stdin EOF and SIGTERM leaves nothing when it resolves', async () => {
    const server = await readyServer('ignores-sigterm');
    const tree = await treeOf(server.pid);
    expect(server.sandbox).toEqual({ tool: 'bwrap', ...DEFAULT_SANDBOX });
    const t0 = Date.now();
    await server.close(400);
    expect(Date.now() - t0).toBeLessThan(400 + 1000 + 500);
    expect(alive(tree)).toEqual([]);
  });

  test('close() also ends a grandchild that left for a session of its own', async () => {
    const server = await readyServer('escapes-group');
    const tree = await treeOf(server.pid, 1);
    await server.close(400);
    expect(alive(tree)).toEqual([]);
  });

  test('gets SIGTERM itself at the grace\'s half (a sandbox\'s first process ignores it)', async () => {
    const server = await readyServer('ignores-sigterm');
    await treeOf(server.pid);
    const lines: string[] = [];
    server.on('stderr', (line) => lines.push(line));
    // A grace long enough for a loaded machine to run the handler before the SIGKILL.
    await server.close(3000);
    expect(lines).toContain('ignoring SIGTERM');
  });

  test('a crash mid-call: the call fails peer-exited with the exit code, and nothing is left', async () => {
    const client = await McpClient.connect({ ...fixtureConfig('echo-server.mjs'), sandbox: DEFAULT_SANDBOX }, { name: 'crashy' });
    const tree = await treeOf(client.pid);
    await expect(client.callTool('crash')).rejects.toMatchObject({ code: 'peer-exited', exitCode: 3 });
    await waitUntil(() => alive(tree).length === 0, GONE_WITHIN_MS, `the sandbox to be gone: ${alive(tree).join(', ')}`);
    await client.close();
  });
});

describe('a host killed with SIGKILL', () => {
  test('leaves no sandboxed server behind: not bwrap, not the server, not its escaped grandchild', async () => {
    const host = spawn(process.execPath, [fixture('host-keeps-sandboxed.mjs')], { stdio: ['ignore', 'pipe', 'inherit'], env: safeEnvironment() });
    leftovers.push(host.pid!);
    const ended = new Promise((resolve) => host.once('exit', (code, signal) => resolve({ code, signal })));
    const { pids } = JSON.parse(await lineReader(host.stdout!).next(20_000)) as { pids: number[] };
    const trees = [await treeOf(pids[0]!), await treeOf(pids[1]!, 1)];
    host.kill('SIGKILL');
    expect(await ended).toEqual({ code: null, signal: 'SIGKILL' });
    await waitUntil(() => trees.every((tree) => alive(tree).length === 0), GONE_WITHIN_MS, `every sandbox to be gone: ${trees.flatMap(alive).join(', ')}`);
  });
});
