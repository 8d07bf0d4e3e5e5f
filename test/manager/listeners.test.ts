import { fixture } from '../support/fixtures.js';
import { runNode } from '../cli/run-cli.js';

// In a host process of its own: the warnings it must print are then read and checked here,
// not left in the test run's output.
describe('listeners that throw', () => {
  it('never break a start, a call, the state or the host, and each is reported once as a LAZY_MCP_LISTENER warning', async () => {
    const run = await runNode(fixture('host-throwing-listeners.mjs').args[0], [], { timeoutMs: 30_000 });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      first: 'hi',
      stateAfterFirst: 'ready',
      logged: 'logged',
      crash: 'peer-exited',
      again: 'again',
      stateAfterAgain: 'ready',
      stateAfterShutdown: 'closed',
      seen: ['exit', 'log', 'stateChange', 'stderr'],
    });
    const warnings = run.stderr.split('\n').filter((line) => /^\(node:\d+\) /.test(line));
    const reported = warnings.map((line) => /\[LAZY_MCP_LISTENER\] Warning: a (\w+) listener of McpServerManager threw \(reported once per listener\): Error: (.*)$/.exec(line)?.slice(1, 3));
    // Every warning is ours; each throwing listener of an event that fired is reported once, however often it threw.
    expect(reported.every((r) => r !== undefined)).toBe(true);
    expect(reported.map((r) => r!.join(': ')).sort()).toEqual(
      ['exit', 'log', 'stateChange', 'stderr'].flatMap((event) => [`${event}: ${event} listener fails`, `${event}: async ${event} listener fails`]).sort(),
    );
  });
});
