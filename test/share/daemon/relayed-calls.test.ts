import { McpClient } from '../../../src/protocol/client.js';
import { attachShared } from '../../../src/share/daemon/attach.js';
import { sharedSpec } from '../../../src/share/daemon/open-shared.js';
import type { ElicitRequest } from '../../../src/protocol/types.js';
import { McpError } from '../../../src/errors.js';
import { fixture, textOf } from '../../support/fixtures.js';
import { abortedInFlight, cancellationsSeen, sharedManager, sharedOptions } from './support.js';

const clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const echoConfig = { ...fixture('echo-server.mjs'), framing: 'newline' as const };

/** A client of the daemon speaking only the legacy revision (as an older client would). */
async function legacyClient(shared: { runtimeDir: string }, config = echoConfig, options: Parameters<typeof McpClient.over>[1] = {}): Promise<McpClient> {
  const named = { name: 'e', ...options };
  const client = await McpClient.over(await attachShared({ name: 'e', spec: sharedSpec(config, named) }, shared), { ...named, protocolVersion: '2025-06-18' });
  clients.push(client);
  return client;
}

describe("the daemon's short path for tool calls to a running legacy server", () => {
  it("a call goes to the server under an id of the relay's; answers, the server's own errors, progress by the caller's token and a caller's abort are as on the long path", async () => {
    const shared = sharedOptions();
    const manager = sharedManager({ e: echoConfig }, shared);
    // The first call starts the server (the long path); the next ones find it running.
    expect(textOf(await manager.callTool('mcp__e__echo', { text: 'first' }))).toBe('first');
    const answers = await Promise.all([1, 2, 3].map((n) => manager.callTool('mcp__e__echo', { text: `n${n}` })));
    expect(answers.map(textOf)).toEqual(['n1', 'n2', 'n3']);
    expect(await manager.callTool('mcp__e__fail', { why: 'nope' })).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
    const failed = await manager.callTool('mcp__e__missing_file', {}).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(McpError);
    expect(failed).toMatchObject({ code: 'rpc-error', rpc: { code: -32602, message: 'tool missing_file: input file not found' } });

    const steps: number[] = [];
    expect(textOf(await manager.callTool('mcp__e__slow', { ms: 90, interval: 30 }, { onProgress: (p) => steps.push(p.progress) }))).toBe('done');
    expect(steps).toEqual([1, 2, 3]);

    const { outcome, seen } = await abortedInFlight(manager);
    expect(outcome).toMatchObject({ code: 'cancelled' });
    expect(seen).toHaveLength(1);
    // The relay's ids count down from -1, never meeting those of the server's client.
    expect(seen[0].requestId).toBeLessThan(0);
  });

  it('a client that goes away mid-call: its call is cancelled at the server, the other clients carry on', async () => {
    const shared = sharedOptions();
    const stays = await legacyClient(shared);
    expect(textOf(await stays.callTool('echo', { text: 'up' }))).toBe('up');
    const leaves = await legacyClient(shared);
    const pending = leaves.callTool('slow', { ms: 20000 }).then(() => undefined, (e: unknown) => e);
    // The call is at the server once another call sent after it has come back (one stdin, in order).
    expect(textOf(await leaves.callTool('echo', { text: 'behind' }))).toBe('behind');
    await leaves.close();
    expect(await pending).toMatchObject({ code: 'closed' });
    const seen = await cancellationsSeen(() => stays.callTool('cancellations'));
    expect(seen).toEqual([expect.objectContaining({ requestId: expect.any(Number) })]);
    expect(seen[0].requestId).toBeLessThan(0);
    expect(textOf(await stays.callTool('echo', { text: 'still' }))).toBe('still');
  });

  it("a server's question during a short-path call reaches only its caller: as a request related to the call (legacy link), as input_required rounds (a client that insists on 2026)", async () => {
    const shared = sharedOptions();
    const servers = { f: fixture('host-features.mjs') };
    const asked: string[] = [];
    const handler = (who: string) => async (request: ElicitRequest) => (asked.push(`${who}: ${request.message}`), { action: 'accept' as const, content: { name: who } });
    const a = sharedManager(servers, shared, { capabilities: { elicitation: true } });
    const b = sharedManager(servers, shared, { capabilities: { elicitation: true } });
    const chatA = a.session({ handlers: { elicitation: handler('a') } });
    // Started by b's call; a's calls find it running.
    await b.callTool('mcp__f__record');
    const first = JSON.parse(textOf(await chatA.callTool('mcp__f__ask', { message: 'Who?' })));
    expect(first.result).toEqual({ action: 'accept', content: { name: 'a', size: 3 } });
    expect(a.status().f).toMatchObject({ era: 'legacy', pid: b.status().f.pid });
    // Calls of both clients in flight when the server asks (legacy stdio says not whose): no client is asked.
    const both = await Promise.all([chatA.callTool('mcp__f__ask', { message: 'A?', together: 2 }), b.callTool('mcp__f__ask', { message: 'B?', together: 2 })]);
    expect(both.map((r) => JSON.parse(textOf(r)).result)).toEqual([{ action: 'decline' }, { action: 'decline' }]);
    const second = JSON.parse(textOf(await chatA.callTool('mcp__f__ask', { message: 'Again?' })));
    expect(second.result).toEqual({ action: 'accept', content: { name: 'a', size: 3 } });
    expect(asked).toEqual(['a: Who?', 'a: Again?']);

    const fConfig = { ...fixture('host-features.mjs'), framing: 'newline' as const };
    const options = { name: 'f', capabilities: { elicitation: true }, clientInfo: { name: 'lazy-mcp', version: '0' }, handlers: { elicitation: handler('modern') } };
    const modern = await McpClient.over(await attachShared({ name: 'f', spec: sharedSpec(fConfig, options) }, shared), { ...options, protocolVersion: '2026-07-28' });
    clients.push(modern);
    expect(modern.era).toBe('2026');
    expect(textOf(await modern.callTool('record'))).toContain('clientCapabilities');
    const third = JSON.parse(textOf(await modern.callTool('ask', { message: 'New?' })));
    expect(third.result).toEqual({ action: 'accept', content: { name: 'modern' } });
    expect(asked).toEqual(['a: Who?', 'a: Again?', 'modern: New?']);
    // A call that asks nothing is answered at once, in the 2026 envelope.
    expect(await modern.callTool('read_file', { path: 'y' })).toMatchObject({ content: [{ type: 'text', text: 'read y' }] });
  });
});
