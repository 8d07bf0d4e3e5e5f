import { McpError } from '../../../src/errors.js';
import type { McpClient } from '../../../src/protocol/client.js';
import type { ResolvedServer, ServerEntry } from '../../../src/manager/config/config.js';
import type { ChannelFactory } from '../../../src/manager/pool/channel-factory.js';
import { BACKOFF_BASE_MS, MAX_FAILED_STARTS, ServerSlot, type ServerState, type SlotHost } from '../../../src/manager/pool/server-slot.js';
import { checkTransition, TRANSITIONS } from '../../../src/manager/pool/slot-transitions.js';
import { MetricsRecorder } from '../../../src/manager/telemetry/metrics.js';
import { waitFor } from '../../support/fixtures.js';
import { memoryPair, type MemoryPeer, NO_ANSWER } from '../../support/memory-peer.js';

// The slot's state machine over in-memory channel pairs: every move of its transition
// table, and the races between calls, starts, restarts, stops and the shutdown. No process
// runs here; the server is a MemoryPeer answering the few requests a slot sends.

/** Every move any test of this file made, checked against the table by the last test. */
const taken = new Set<string>();

/** What each start's server does; by default it answers at once. */
interface Behaviour {
  /** Runs before `initialize` is answered (a slow start). */
  initialize?: (peer: MemoryPeer) => unknown;
  /** Answers `tools/list` (default one tool); NO_ANSWER to ignore it. */
  listTools?: (peer: MemoryPeer) => unknown;
  /** Answers `tools/call` (default an echo). */
  callTool?: (params: { arguments: { text?: string } }, peer: MemoryPeer) => unknown;
  ping?: (peer: MemoryPeer) => unknown;
}

/** A minimal legacy MCP server on the far end of a memory pair. */
function serve(peer: MemoryPeer, how: Behaviour): void {
  peer.handlers.set('server/discover', () => {
    throw Object.assign(new Error('Method not found'), { code: -32601 });
  });
  peer.handlers.set('initialize', async (params) => {
    await how.initialize?.(peer);
    return { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'mem', version: '1' } };
  });
  peer.handlers.set('tools/list', () => (how.listTools ? how.listTools(peer) : { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  peer.handlers.set('tools/call', (params) => (how.callTool ? how.callTool(params, peer) : { content: [{ type: 'text', text: params.arguments.text }] }));
  peer.handlers.set('ping', () => (how.ping ? how.ping(peer) : {}));
}

interface Harness {
  slot: ServerSlot;
  /** The moves of this slot, `from>to`. */
  moves: string[];
  /** Each start's server, in order. */
  peers: MemoryPeer[];
  /** The behaviour of the next starts; a test may change it between starts. */
  behaviour: Behaviour;
  /** The next starts fail to open their channel with this error, while set. */
  refuse: McpError | undefined;
  /** The slot's clock of backoff waits, in ms: a test moves it on instead of waiting. */
  clock: number;
  /** Tools lists the slot handed to its host. */
  listed: number;
  /** Called after each move is recorded. */
  onMove?: (from: ServerState, to: ServerState) => void;
}

const slots: ServerSlot[] = [];
afterEach(async () => {
  await Promise.all(slots.splice(0).map((slot) => slot.shutdown(50)));
});

function harness(config: Partial<ResolvedServer> = {}, entry?: ServerEntry, host: Partial<SlotHost> = {}): Harness {
  const h = { moves: [] as string[], peers: [] as MemoryPeer[], behaviour: {} as Behaviour, refuse: undefined as McpError | undefined, clock: 0, listed: 0 } as Harness;
  const channels: ChannelFactory = {
    open: async () => {
      if (h.refuse) throw h.refuse;
      const { near, peer } = memoryPair();
      serve(peer, h.behaviour);
      h.peers.push(peer);
      return near;
    },
  };
  const slotHost: SlotHost = {
    connectOptions: (server) => ({ name: server, timeout: 2000, shutdownGraceMs: 50 }),
    stateChanged: (_server, from, to) => {
      h.moves.push(`${from}>${to}`);
      taken.add(`${from}>${to}`);
      h.onMove?.(from, to);
    },
    toolsListed: async () => void h.listed++,
    knowsTools: () => false,
    relistFailed: () => undefined,
    connected: () => undefined,
    metrics: new MetricsRecorder(),
    clock: () => h.clock,
    channels,
    ...host,
  };
  const server = entry ?? { name: 'mem', kind: 'stdio', config: { command: 'unused', startup: 'lazy', ...config } as ResolvedServer };
  h.slot = new ServerSlot(server, slotHost);
  slots.push(h.slot);
  return h;
}

/** A promise and the function that resolves it. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Calls the `echo` tool through the slot; resolves with its text. */
function echo(slot: ServerSlot, text: string, options = {}): Promise<string> {
  return slot
    .run((client: McpClient, _touch, sendOptions) => client.callTool('echo', { text }, sendOptions), options)
    .then((result) => (result.content[0] as { text: string }).text);
}

/** A slot whose first start waits for `open()`, and the call that woke it; the slot is `starting`. */
async function heldStart(text: string): Promise<{ h: Harness; open: () => void; call: Promise<string> }> {
  const h = harness();
  const started = gate();
  h.behaviour.initialize = () => started.opened;
  const call = echo(h.slot, text);
  await until(() => h.slot.state === 'starting');
  return { h, open: started.open, call };
}

/** A running slot and a call on it that its server never answers (settling with the call's error). */
async function stuckCall(): Promise<{ h: Harness; inFlight: Promise<unknown> }> {
  const h = harness();
  expect(await echo(h.slot, 'up')).toBe('up');
  h.behaviour.callTool = () => NO_ANSWER;
  const inFlight = echo(h.slot, 'stuck').catch((e: unknown) => e);
  await until(() => h.peers[0].sent('tools/call').length === 2);
  return { h, inFlight };
}

async function until(check: () => boolean): Promise<void> {
  expect(await waitFor(check, 2000, 1)).toBe(true);
}

describe('starting', () => {
  it('a first call starts the server once; calls during the start share it', async () => {
    const { h, open, call } = await heldStart('a');
    const calls = [call, echo(h.slot, 'b'), echo(h.slot, 'c')];
    open();
    expect(await Promise.all(calls)).toEqual(['a', 'b', 'c']);
    expect(h.peers).toHaveLength(1);
    expect(h.moves).toEqual(['idle>starting', 'starting>ready']);
    expect(h.listed).toBe(1);
  });

  it('a call whose time runs out during the start fails alone; the start goes on', async () => {
    const { h, open, call } = await heldStart('first');
    const late = echo(h.slot, 'late', { timeout: 5 }).catch((e: unknown) => e);
    expect(await late).toMatchObject({ code: 'timeout' });
    expect(h.slot.state).toBe('starting');
    open();
    expect(await call).toBe('first');
    expect(await echo(h.slot, 'next')).toBe('next');
    expect(h.peers).toHaveLength(1);
  });

  it('restart() during a start joins it: one server, no second start', async () => {
    const { h, open, call } = await heldStart('a');
    const restarted = h.slot.restart();
    open();
    await restarted;
    expect(await call).toBe('a');
    expect(h.peers).toHaveLength(1);
    expect(h.moves).toEqual(['idle>starting', 'starting>ready']);
  });

  it('a server that dies during the listing after its handshake is a failed start, never ready on a dead connection', async () => {
    const h = harness();
    h.behaviour.listTools = (peer) => {
      void peer.channel.close();
      return NO_ANSWER;
    };
    const error = await echo(h.slot, 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(h.moves).toEqual(['idle>starting', 'starting>backoff']);
    expect(h.peers[0].channel.isOpen).toBe(false);

    // Listed, but gone while the host took the listing in (its prompts/list, say).
    const late = harness({}, undefined, {
      toolsListed: async () => {
        void late.peers[0].channel.close();
        await until(() => !late.peers[0].channel.isOpen);
      },
    });
    await expect(echo(late.slot, 'x')).rejects.toBeInstanceOf(McpError);
    expect(late.moves).toEqual(['idle>starting', 'starting>backoff']);
    expect(late.slot.status()).toMatchObject({ state: 'backoff', lastError: expect.any(McpError) });
  });
});

describe('backoff and failure', () => {
  it('after a failed start calls fail fast until the wait is over; then the next call starts', async () => {
    const h = harness();
    h.refuse = new McpError('connect-failed', 'refused');
    await expect(echo(h.slot, 'x')).rejects.toMatchObject({ code: 'connect-failed' });
    expect(h.slot.state).toBe('backoff');
    expect(h.slot.coolingDown).toBe(true);
    h.refuse = undefined;
    const fast = await echo(h.slot, 'x').catch((e: unknown) => e);
    expect(fast).toMatchObject({ code: 'unavailable' });
    expect((fast as Error).message).toContain(`next try in ${BACKOFF_BASE_MS} ms`);
    expect(h.peers).toHaveLength(0);
    h.clock += BACKOFF_BASE_MS;
    expect(h.slot.coolingDown).toBe(false);
    expect(await echo(h.slot, 'again')).toBe('again');
    expect(h.moves).toEqual(['idle>starting', 'starting>backoff', 'backoff>starting', 'starting>ready']);
  });

  it(`${MAX_FAILED_STARTS} failed starts in a row: failed until restart(), which starts afresh`, async () => {
    const h = harness();
    h.refuse = new McpError('connect-failed', 'refused');
    for (let i = 0; i < MAX_FAILED_STARTS; i++) {
      await expect(echo(h.slot, 'x')).rejects.toMatchObject({ code: 'connect-failed' });
      h.clock += 60_000;
    }
    expect(h.slot.state).toBe('failed');
    await expect(echo(h.slot, 'x')).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining(`failed ${MAX_FAILED_STARTS} starts in a row`) });
    h.refuse = undefined;
    await h.slot.restart();
    expect(h.slot.state).toBe('ready');
    expect(h.moves.slice(-3)).toEqual(['starting>failed', 'failed>starting', 'starting>ready']);
  });

  it('shutdown while backing off, or failed, closes the slot for good', async () => {
    const backingOff = harness();
    backingOff.refuse = new McpError('connect-failed', 'refused');
    await expect(echo(backingOff.slot, 'x')).rejects.toBeInstanceOf(McpError);
    await backingOff.slot.shutdown();
    expect(backingOff.moves).toEqual(['idle>starting', 'starting>backoff', 'backoff>closed']);
    await expect(backingOff.slot.ready()).rejects.toMatchObject({ code: 'closed' });

    const failed = harness();
    failed.refuse = new McpError('connect-failed', 'refused');
    for (let i = 0; i < MAX_FAILED_STARTS; i++, failed.clock += 60_000) await expect(echo(failed.slot, 'x')).rejects.toBeInstanceOf(McpError);
    await failed.slot.shutdown();
    expect(failed.moves.slice(-2)).toEqual(['starting>failed', 'failed>closed']);
  });
});

describe('needs-auth', () => {
  it('a start refused for authorization waits for a login; authorized() lets the next call start', async () => {
    const h = harness();
    h.refuse = new McpError('auth-required', 'log in first', { status: 401 });
    await expect(echo(h.slot, 'x')).rejects.toMatchObject({ code: 'auth-required' });
    expect(h.slot.state).toBe('needs-auth');
    // Never authorized in the background: without tokens the call fails at once, nothing opens.
    await expect(echo(h.slot, 'x')).rejects.toMatchObject({ code: 'auth-required' });
    h.refuse = undefined;
    h.slot.authorized();
    expect(await echo(h.slot, 'in')).toBe('in');
    expect(h.moves).toEqual(['idle>starting', 'starting>needs-auth', 'needs-auth>stopped', 'stopped>starting', 'starting>ready']);
  });

  it('tokens stored since (a login elsewhere) are used by the next call', async () => {
    let tokens = false;
    const h = harness({}, undefined, { auth: () => ({ hasTokens: async () => tokens }) as never });
    h.refuse = new McpError('auth-required', 'log in first', { status: 401 });
    await expect(echo(h.slot, 'x')).rejects.toMatchObject({ code: 'auth-required' });
    h.refuse = undefined;
    tokens = true;
    expect(await echo(h.slot, 'in')).toBe('in');
    expect(h.moves.slice(1)).toEqual(['starting>needs-auth', 'needs-auth>stopped', 'stopped>starting', 'starting>ready']);
  });

  it('a running server that no longer takes the tokens waits for a login; restart() or shutdown() from there', async () => {
    const h = harness();
    expect(await echo(h.slot, 'up')).toBe('up');
    const refused = h.slot.run(() => Promise.reject(new McpError('auth-required', 'token revoked', { status: 401 })));
    await expect(refused).rejects.toMatchObject({ code: 'auth-required' });
    await until(() => h.slot.state === 'needs-auth');
    expect(h.peers[0].channel.isOpen).toBe(false);
    await h.slot.restart();
    expect(h.slot.state).toBe('ready');
    h.slot.run(() => Promise.reject(new McpError('auth-required', 'revoked again', { status: 401 }))).catch(() => undefined);
    await until(() => h.slot.state === 'needs-auth');
    await h.slot.shutdown();
    expect(h.moves).toEqual([
      'idle>starting',
      'starting>ready',
      'ready>needs-auth',
      'needs-auth>starting',
      'starting>ready',
      'ready>needs-auth',
      'needs-auth>closed',
    ]);
  });
});

describe('running', () => {
  it('a server that goes away is stopped, and the next call starts it again', async () => {
    const h = harness();
    expect(await echo(h.slot, 'one')).toBe('one');
    void h.peers[0].channel.close();
    await until(() => h.slot.state === 'stopped');
    expect(await echo(h.slot, 'two')).toBe('two');
    expect(h.peers).toHaveLength(2);
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>stopped', 'stopped>starting', 'starting>ready']);
  });

  it('shutdown of a server that went away', async () => {
    const h = harness();
    expect(await echo(h.slot, 'one')).toBe('one');
    void h.peers[0].channel.close();
    await until(() => h.slot.state === 'stopped');
    await h.slot.shutdown();
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>stopped', 'stopped>closed']);
  });

  it('restart() of a running server: calls in flight on the old connection fail unavailable; two restarts make one start', async () => {
    const { h, inFlight } = await stuckCall();
    h.behaviour.callTool = undefined;
    await Promise.all([h.slot.restart(), h.slot.restart()]);
    expect(await inFlight).toMatchObject({ code: 'unavailable', message: expect.stringContaining('restarted') });
    expect(h.peers).toHaveLength(2);
    expect(await echo(h.slot, 'new')).toBe('new');
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>stopped', 'stopped>starting', 'starting>ready']);
  });

  it('failing health probes restart the server, and say why in lastError', async () => {
    const h = harness({ healthCheck: { intervalMs: 1, timeoutMs: 5 } });
    // The first server stops answering probes; the one that replaces it answers them.
    h.behaviour.ping = (peer) => (peer === h.peers[0] ? NO_ANSWER : {});
    expect(await echo(h.slot, 'up')).toBe('up');
    await until(() => h.peers.length === 2 && h.slot.state === 'ready');
    expect(h.peers[0].channel.isOpen).toBe(false);
    expect(h.slot.status().lastError).toMatchObject({ code: 'timeout', message: expect.stringContaining('health checks in a row') });
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>stopped', 'stopped>starting', 'starting>ready']);
  });

  it('an idle stop racing a new call: the call waits for the stop, then starts the server again', async () => {
    const h = harness({ idleTimeout: 1 });
    let raced: Promise<string> | undefined;
    h.onMove = (from, to) => {
      // The idle stop has taken the connection and is closing it: a call arrives right now.
      if (from === 'ready' && to === 'stopped' && !raced) raced = echo(h.slot, 'raced');
    };
    expect(await echo(h.slot, 'first')).toBe('first');
    await until(() => raced !== undefined);
    expect(await raced).toBe('raced');
    expect(h.peers).toHaveLength(2);
    expect(h.peers[0].channel.isOpen).toBe(false);
    expect(h.moves.slice(0, 5)).toEqual(['idle>starting', 'starting>ready', 'ready>stopped', 'stopped>starting', 'starting>ready']);
  });
});

describe('shutdown and drain', () => {
  it('shutdown of a slot never started, and of entries that cannot run', async () => {
    const h = harness();
    await h.slot.shutdown();
    expect(h.moves).toEqual(['idle>closed']);
    const error = new McpError('invalid-config', 'bad entry');
    for (const entry of [
      { name: 'bad', kind: 'invalid', error },
      { name: 'odd', kind: 'unsupported', error: new McpError('unsupported-transport', 'no such transport') },
      { name: 'off', kind: 'disabled', config: { command: 'unused', startup: 'lazy' } },
    ] as ServerEntry[]) {
      const other = harness({}, entry);
      await expect(other.slot.ready()).rejects.toBeInstanceOf(McpError);
      await other.slot.shutdown();
      expect(other.moves).toEqual([`${entry.kind}>closed`]);
      expect(other.peers).toHaveLength(0);
    }
  });

  it('shutdown during a start aborts it: the waiting call gets closed, the channel is closed, the slot never becomes ready', async () => {
    const h = harness();
    h.behaviour.initialize = () => NO_ANSWER_EVER;
    const call = echo(h.slot, 'x').catch((e: unknown) => e);
    await until(() => h.peers.length === 1);
    await h.slot.shutdown();
    expect(await call).toMatchObject({ code: 'closed' });
    expect(h.peers[0].channel.isOpen).toBe(false);
    expect(h.moves).toEqual(['idle>starting', 'starting>closed']);
    await expect(h.slot.restart()).rejects.toMatchObject({ code: 'closed' });
  });

  it('shutdown during a call: the call fails closed, the connection is closed, later calls fail closed', async () => {
    const { h, inFlight } = await stuckCall();
    await h.slot.shutdown();
    expect(await inFlight).toMatchObject({ code: 'closed' });
    expect(h.peers[0].channel.isOpen).toBe(false);
    await expect(echo(h.slot, 'after')).rejects.toMatchObject({ code: 'closed' });
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>closed']);
  });

  it('shutdown during a restart waits for its start and leaves nothing open', async () => {
    const h = harness();
    expect(await echo(h.slot, 'up')).toBe('up');
    h.behaviour.initialize = () => NO_ANSWER_EVER;
    const restarted = h.slot.restart().catch((e: unknown) => e);
    await until(() => h.peers.length === 2);
    await h.slot.shutdown();
    expect(await restarted).toMatchObject({ code: 'closed' });
    expect(h.peers.map((p) => p.channel.isOpen)).toEqual([false, false]);
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>stopped', 'stopped>starting', 'starting>closed']);
  });

  it('drain (a reload) waits for the calls in flight, then closes; they keep their answers', async () => {
    const { h, inFlight } = await stuckCall();
    const calls = [inFlight, echo(h.slot, 'two')];
    await until(() => h.peers[0].sent('tools/call').length === 3);
    let drained = false;
    const drain = h.slot.drain(50).then(() => (drained = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    expect(h.slot.state).toBe('ready');
    for (const request of h.peers[0].sent('tools/call').slice(1)) h.peers[0].reply(request.id, { content: [{ type: 'text', text: request.params.arguments.text }] });
    expect(await Promise.all(calls)).toEqual(['stuck', 'two']);
    await drain;
    expect(h.slot.state).toBe('closed');
    expect(h.peers[0].channel.isOpen).toBe(false);
  });

  it('drain while a call waits for the start: the start finishes, the call is answered, then the slot closes', async () => {
    const { h, open, call } = await heldStart('waited');
    const drain = h.slot.drain(50);
    open();
    expect(await call).toBe('waited');
    await drain;
    expect(h.moves).toEqual(['idle>starting', 'starting>ready', 'ready>closed']);
  });
});

describe('the transition table', () => {
  it('refuses a move it does not list with an internal error', () => {
    expect(() => checkTransition('mem', 'closed', 'starting')).toThrow(/internal error: server "mem": no transition from closed to starting/);
    expect(() => checkTransition('mem', 'idle', 'ready')).toThrow(/internal error/);
    expect(() => checkTransition('mem', 'ready', 'ready')).toThrow(/internal error/);
    expect(() => checkTransition('mem', 'stopped', 'starting')).not.toThrow();
  });

  it('every move of the table was made by the tests above, and no other', () => {
    const table = Object.entries(TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from}>${to}`));
    expect([...taken].sort()).toEqual(table.sort());
  });
});

/** A promise that never settles: an `initialize` the server never answers. */
const NO_ANSWER_EVER = new Promise<never>(() => undefined);
