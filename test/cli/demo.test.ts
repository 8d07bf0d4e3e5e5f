import { resolve } from 'node:path';
import { isAlive, repoRoot } from '../support/fixtures.js';
import { demoPath, runNode } from './run-cli.js';

// `npm start`: the demo runs on the bundled config, exits 0 and leaves no process.
it('runs the demo to the end and leaves none of its server processes', async () => {
  const run = await runNode(demoPath, [], { timeoutMs: 30_000 });
  expect(run).toMatchObject({ code: 0, stderr: '' });
  // At 80 columns, long lines wrap at spaces with their rest indented (5 = 3 + 2) under them.
  expect(run.stdout.split('\n').filter((line) => line.length > 80)).toEqual([]);
  const out = run.stdout.replace(/\n {5}(?=\S)/g, ' ');
  expect(out).toMatch(/1\. Construct a manager +\d+ ms\n +0 server processes running/);
  expect(out).toMatch(/2\. List every tool: starts all 4 servers in parallel +\d+ ms\n/);
  expect(out).toMatch(/3\. A fresh manager calls mcp__dice__roll +\d+ ms\n +→ 2d6: \d+ \+ \d+ = \d+\n +1 of 4 servers started: dice \(pid \d+\)/);
  expect(out).toMatch(/4\. 20 calls at once on that manager +\d+ ms\n +20 of 20 answered over one connection to pid \d+; 1 start in all, 1 process\n/);
  expect(out).toMatch(/5\. Another fresh manager lists tools from the manifest cache +\d+ ms\n +\d+ tools, 0 servers started, 0 processes running\n/);
  const pids = /were started in this demo \(pids ([\d, ]+)\); 0 alive now/.exec(out)?.[1].split(', ').map(Number) ?? [];
  // Four servers for the listing and one more for the fresh manager's call.
  expect(pids).toHaveLength(5);
  expect(pids.filter(isAlive)).toEqual([]);

  // The closing hint is a command that works as printed.
  const hint = /Try the CLI on the same servers:\n +node (\S+) (tools --config \S+)\n/.exec(run.stdout);
  expect(hint).not.toBeNull();
  const tools = await runNode(resolve(repoRoot, hint![1]), hint![2].split(' '), { timeoutMs: 30_000 });
  expect(tools.code).toBe(0);
  expect(tools.stdout).toContain('mcp__dice__roll');
}, 70_000);
