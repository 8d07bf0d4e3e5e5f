import type { McpError } from '../../src/errors.js';
import { McpClient } from '../../src/protocol/client.js';
import type { ExitStatus } from '../../src/transport/stdio/server-process.js';
import { fixture, waitFor } from '../support/fixtures.js';
import { memoryPair, NO_ANSWER } from '../support/memory-peer.js';

const rejection = (promise: Promise<unknown>): Promise<McpError> =>
  promise.then(
    (client) => {
      void (client as McpClient).close();
      throw new Error('resolved');
    },
    (e: McpError) => e,
  );

describe('aborting a connect', () => {
  it('rejects at once with cancelled carrying the reason, and stops the server in the background', async () => {
    const controller = new AbortController();
    let up!: () => void;
    const started = new Promise<void>((resolve) => (up = resolve));
    const exits: ExitStatus[] = [];
    // It ignores stdin's end, so its teardown takes SIGTERM at half the 2 s grace: the
    // rejection must not wait for it.
    const connecting = McpClient.connect(fixture('ignores-stdin-eof.mjs'), {
      name: 'stuck',
      timeout: 30_000,
      signal: controller.signal,
      listeners: { noise: () => up(), exit: (status) => exits.push(status) },
    });
    await started;
    const reason = new Error('the user gave up');
    const abortedAt = performance.now();
    controller.abort(reason);
    const error = await rejection(connecting);
    expect(exits).toEqual([]);
    expect(performance.now() - abortedAt).toBeLessThan(900);
    expect(error).toMatchObject({ code: 'cancelled', server: 'stuck', phase: 'connect', message: 'server "stuck": connect was cancelled' });
    expect(error.cause).toBe(reason);
    // The process the start spawned is stopped, not left behind.
    expect(await waitFor(() => exits.length === 1, 10_000)).toBe(true);
    expect(exits[0].signal).toBe('SIGTERM');
  });

  it('spawns nothing for a signal aborted before the call', async () => {
    const reason = new Error('too late');
    // A command that cannot be spawned: trying would fail with spawn-failed instead.
    const error = await rejection(McpClient.connect({ command: '/nonexistent/lazy-mcp-server' }, { name: 'x', signal: AbortSignal.abort(reason) }));
    expect(error).toMatchObject({ code: 'cancelled', phase: 'connect' });
    expect(error.cause).toBe(reason);
  });

  it('over a channel: a pre-aborted signal closes the channel; an abort during negotiation rejects at once and closes it', async () => {
    const a = memoryPair();
    const error = await rejection(McpClient.over(a.near, { name: 'm', signal: AbortSignal.abort('no') }));
    expect(error).toMatchObject({ code: 'cancelled', cause: 'no' });
    expect(a.near.isOpen).toBe(false);
    expect(a.peer.received).toEqual([]);

    const b = memoryPair();
    b.peer.handlers.set('server/discover', () => NO_ANSWER);
    const controller = new AbortController();
    const connecting = McpClient.over(b.near, { name: 'm', signal: controller.signal });
    await b.peer.next('server/discover');
    controller.abort('stop');
    await expect(connecting).rejects.toMatchObject({ code: 'cancelled', cause: 'stop' });
    expect(b.near.isOpen).toBe(false);
  });

  it('an abort after connect resolved changes nothing', async () => {
    const { near, peer } = memoryPair();
    peer.handlers.set('server/discover', () => {
      throw Object.assign(new Error('Method not found'), { code: -32601 });
    });
    peer.handlers.set('initialize', (params) => ({ protocolVersion: params.protocolVersion, capabilities: {}, serverInfo: { name: 's', version: '1' } }));
    peer.handlers.set('ping', () => ({}));
    const controller = new AbortController();
    const client = await McpClient.over(near, { name: 'm', signal: controller.signal });
    controller.abort();
    await client.ping();
    expect(client.isOpen).toBe(true);
    await client.close();
  });
});
