import { PassThrough, Writable } from 'node:stream';
import type { Message } from 'vscode-jsonrpc';
import { McpError } from '../../src/errors.js';
import { createMessageIO, DEFAULT_MAX_QUEUED_BYTES, type Framing } from '../../src/transport/framing/framing.js';
import { ServerProcess } from '../../src/transport/stdio/server-process.js';
import { nodeSpec, waitUntil } from './process-probes.js';

const request = (id: number, bytes = 8 * 1024): Message => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(bytes) } } }) as Message;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A real Writable whose peer reads only when told: each chunk's callback waits for
 * `release()`, and every call the stream makes to it (`_write` or `_writev`) is recorded.
 */
function heldStream(highWaterMark = 16 * 1024) {
  const calls: string[][] = [];
  let held: (() => void)[] = [];
  let holding = true;
  const settle = (done: () => void) => (holding ? held.push(done) : done());
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      calls.push([chunk.toString()]);
      settle(done);
    },
    writev(chunks, done) {
      calls.push(chunks.map((c) => (c.chunk as Buffer).toString()));
      settle(done);
    },
  });
  const release = () => {
    holding = false;
    const waiting = held;
    held = [];
    for (const done of waiting) done();
  };
  /** Ids of the frames written so far, in order. */
  const ids = () => [...calls.flat().join('').matchAll(/"id":(\d+)/g)].map((m) => Number(m[1]));
  return { stream, calls, release, ids };
}

describe('frames of one event-loop turn', () => {
  it.each<Framing>(['newline', 'content-length'])('leave joined, at most 16 to a write, in order (%s)', async (framing) => {
    const { stream, calls, release } = heldStream(1 << 20);
    release();
    const { writer } = createMessageIO(framing, new PassThrough(), stream);
    await Promise.all(Array.from({ length: 100 }, (_, i) => writer.write(request(i, 10))));
    // Each write is one string of whole frames: 100 frames in ceil(100 / 16) writes.
    expect(calls.map((chunks) => chunks.length)).toEqual(Array(7).fill(1));
    const perWrite = calls.map(([text]) => [...text.matchAll(/"id":(\d+)/g)].length);
    expect(perWrite).toEqual([16, 16, 16, 16, 16, 16, 4]);
    const order = [...calls.flat().join('').matchAll(/"id":(\d+)/g)].map((m) => Number(m[1]));
    expect(order).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // The next turn is a write of its own.
    await Promise.all([writer.write(request(100, 10)), writer.write(request(101, 10))]);
    expect(calls).toHaveLength(8);
    writer.dispose();
  });

  it('writes a large frame alone, after the frames before it', async () => {
    const { stream, calls, release } = heldStream(1 << 20);
    release();
    const { writer } = createMessageIO('newline', new PassThrough(), stream);
    await Promise.all([writer.write(request(1, 10)), writer.write(request(2, 64 * 1024)), writer.write(request(3, 10))]);
    expect(calls.map(([text]) => [...text.matchAll(/"id":(\d+)/g)].map((m) => Number(m[1])))).toEqual([[1], [2], [3]]);
    writer.dispose();
  });
});

describe('a peer that stops reading', () => {
  it('holds at most maxQueuedBytes, refusing more with unavailable naming the server, and goes on', async () => {
    const { stream, release, ids } = heldStream();
    const { writer } = createMessageIO('newline', new PassThrough(), stream, { server: 'stuck', maxQueuedBytes: 256 * 1024 });
    const errors: unknown[] = [];
    const writes = Array.from({ length: 200 }, (_, i) => writer.write(request(i)).catch((e: unknown) => void errors.push(e)));
    await tick();
    expect(writer.queuedBytes).toBeLessThanOrEqual(256 * 1024);
    expect(errors.length).toBeGreaterThan(150);
    const [first] = errors as McpError[];
    expect(first).toBeInstanceOf(McpError);
    expect(first).toMatchObject({ code: 'unavailable', server: 'stuck' });
    expect(first.message).toMatch(/^server "stuck": the server is not reading its input: \d+ bytes of messages are already waiting \(maxQueuedBytes 262144\)/);

    release();
    await Promise.all(writes);
    const accepted = 200 - errors.length;
    expect(ids()).toEqual(Array.from({ length: accepted }, (_, i) => i));
    await writer.write(request(1000));
    expect(ids().at(-1)).toBe(1000);
    writer.dispose();
  });

  it('once full, refuses further requests before serializing them, until room is made', async () => {
    const { stream, release } = heldStream();
    const { writer } = createMessageIO('newline', new PassThrough(), stream, { server: 'stuck', maxQueuedBytes: 256 * 1024 });
    let serialized = 0;
    const counted = (id: number): Message => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { toJSON: () => (serialized++, { text: 'x'.repeat(8 * 1024) }) } }) as unknown as Message;
    const errors: McpError[] = [];
    const writes: Promise<void>[] = [];
    let id = 0;
    while (errors.length === 0 && id < 1000) {
      writes.push(writer.write(counted(id++)).catch((e: McpError) => void errors.push(e)));
      await Promise.resolve();
    }
    expect(errors).toHaveLength(1);
    const before = serialized;
    for (let i = 0; i < 5000; i++) writes.push(writer.write(counted(id++)).catch((e: McpError) => void errors.push(e)));
    await tick();
    expect(serialized).toBe(before);
    expect(errors).toHaveLength(5001);
    expect(errors.at(-1)).toMatchObject({ code: 'unavailable', server: 'stuck' });
    expect(errors.at(-1)!.message).toMatch(/not reading its input: \d+ bytes of messages are already waiting \(maxQueuedBytes 262144\)/);
    // Dropping a queued request makes room: the next one is encoded and queued again.
    expect(writer.drop(id - 5002)).toBe(true);
    const next = writer.write(counted(id++));
    expect(serialized).toBe(before + 1);
    release();
    await Promise.all([...writes, next]);
    writer.dispose();
  });

  it('drops the queued frame of a settled request, and only a queued one', async () => {
    const { stream, release, ids } = heldStream();
    const { writer } = createMessageIO('content-length', new PassThrough(), stream);
    const writes = Array.from({ length: 50 }, (_, i) => writer.write(request(i)));
    await tick();
    const queued = writer.queuedBytes;
    expect(writer.drop(0)).toBe(false); // already handed to the stream
    expect(writer.drop(999)).toBe(false); // never written
    const dropped = Array.from({ length: 50 }, (_, i) => i).filter((i) => i % 2 === 1 && i > 10);
    for (const id of dropped) expect(writer.drop(id)).toBe(true);
    expect(writer.drop(dropped[0])).toBe(false); // only once
    expect(writer.queuedBytes).toBeLessThan(queued - dropped.length * 8 * 1024);
    // A notification has no id to drop it by; it keeps its place.
    const note = writer.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 13 } } as Message);

    release();
    await Promise.all([...writes, note]);
    const expected = Array.from({ length: 50 }, (_, i) => i).filter((i) => !dropped.includes(i));
    expect(ids()).toEqual(expected);
    writer.dispose();
  });

  it('lets a request-heavy host hold no more than the cap however many frames it writes (10k × 8 KiB)', async () => {
    const { stream } = heldStream();
    const { writer } = createMessageIO('newline', new PassThrough(), stream);
    let refused = 0;
    const frame = 'y'.repeat(8 * 1024);
    for (let i = 0; i < 10_000; i++) {
      writer.write({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: frame } } as Message).catch(() => void refused++);
      // Each request times out in turn: its frame goes (the slots of dropped frames too).
      if (i >= 100) writer.drop(i - 100);
    }
    await tick();
    expect(writer.queuedBytes).toBeLessThanOrEqual(DEFAULT_MAX_QUEUED_BYTES);
    expect(writer.queuedBytes).toBeLessThan(101 * 8300 + 32 * 1024);
    expect(refused).toBe(0);
    writer.dispose();
  });

  it('rejects a bad maxQueuedBytes with invalid-config before attaching to either stream', () => {
    const readable = new PassThrough();
    const writable = new PassThrough();
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => createMessageIO('newline', readable, writable, { maxQueuedBytes: bad })).toThrow(
        expect.objectContaining({ code: 'invalid-config', message: expect.stringContaining('maxQueuedBytes') }),
      );
    }
    expect(readable.listenerCount('data') + writable.listenerCount('drain')).toBe(0);
  });
});

describe('a server process that stops reading its stdin', () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.close(200);
    server = undefined;
  });

  it('fails writes fast once the queue is full, drops settled frames, and delivers the rest in order once it reads', async () => {
    server = await ServerProcess.spawn(nodeSpec('stops-reading.mjs'));
    const lines: string[] = [];
    server.on('stderr', (line) => lines.push(line));
    await waitUntil(() => lines.includes('ready'), 5000, 'the fixture to start');
    const { writer } = createMessageIO('newline', server.stdout, server.stdin, { server: 'stuck', maxQueuedBytes: 512 * 1024 });

    const outcome = new Map<number, 'sent' | McpError>();
    const writes = Array.from({ length: 400 }, (_, i) =>
      writer.write(request(i)).then(
        () => void outcome.set(i, 'sent'),
        (e: McpError) => void outcome.set(i, e),
      ),
    );
    // The pipe takes what fits (64 KiB on Linux), the writer at most 512 KiB; the rest is refused at once.
    await waitUntil(() => [...outcome.values()].some((o) => o !== 'sent'), 5000, 'a refusal');
    const refused = [...outcome.entries()].filter(([, o]) => o !== 'sent');
    expect(refused[0][1]).toMatchObject({ code: 'unavailable', server: 'stuck' });
    expect(writer.queuedBytes).toBeLessThanOrEqual(512 * 1024);
    const accepted = 400 - refused.length;
    // Beyond what the pipe took, at most maxQueuedBytes wait (frames of ~8 KiB), plus the stream's own buffer.
    const handed = [...outcome.values()].filter((o) => o === 'sent').length;
    expect(accepted - handed).toBeLessThanOrEqual(512 / 8 + 2);

    // The calls whose frames still wait time out: they are dropped, and never reach the server.
    const dropped: number[] = [];
    for (let id = accepted - 1; id >= 0 && dropped.length < 20; id--) if (writer.drop(id)) dropped.push(id);
    expect(dropped).toHaveLength(20);

    process.kill(server.pid, 'SIGUSR2');
    await Promise.all(writes);
    const got = () => lines.filter((l) => l.startsWith('got ')).map((l) => Number(l.slice(4)));
    const expected = Array.from({ length: accepted }, (_, i) => i).filter((i) => !dropped.includes(i));
    await waitUntil(() => got().length >= expected.length, 10000, 'the server to read everything');
    expect(got()).toEqual(expected);
    // And the writer takes new frames again.
    await writer.write(request(5000, 10));
    await waitUntil(() => got().includes(5000), 5000, 'a later frame');
    writer.dispose();
  });
});
