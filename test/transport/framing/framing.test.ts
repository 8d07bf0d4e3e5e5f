import { PassThrough, Writable } from 'node:stream';
import fc from 'fast-check';
import type { Message } from 'vscode-jsonrpc';
import { McpError } from '../../../src/errors.js';
import { ContentLengthMessageReader, ContentLengthMessageWriter } from '../../../src/transport/framing/content-length-framing.js';
import { createMessageIO, type Framing, type FramingOptions, type LazyMessageReader } from '../../../src/transport/framing/framing.js';
import { LineMessageReader, LineMessageWriter } from '../../../src/transport/framing/line-framing.js';

const FRAMINGS: Framing[] = ['newline', 'content-length'];
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A reader over a PassThrough, with everything it reports recorded. */
function openReader(framing: Framing, options?: FramingOptions) {
  const stream = new PassThrough();
  const reader: LazyMessageReader =
    framing === 'newline' ? new LineMessageReader(stream, options) : new ContentLengthMessageReader(stream, options);
  const seen = { messages: [] as unknown[], noise: [] as string[], errors: [] as Error[], closes: 0 };
  reader.onNoise((text) => seen.noise.push(text));
  reader.onError((error) => seen.errors.push(error));
  const closed = new Promise<void>((resolve) =>
    reader.onClose(() => {
      seen.closes++;
      resolve();
    }),
  );
  const listening = reader.listen((message) => seen.messages.push(message));
  /** Writes the chunks, ends the stream and waits for the reader to close. */
  const feed = async (chunks: (string | Buffer)[]): Promise<typeof seen> => {
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
    await closed;
    return seen;
  };
  return { stream, reader, seen, closed, listening, feed };
}

function frame(framing: Framing, message: unknown): Buffer {
  const body = JSON.stringify(message);
  return Buffer.from(framing === 'newline' ? `${body}\n` : `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/** What a writer of the given framing puts on the wire for `messages`. */
async function encode(framing: Framing, messages: Message[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      parts.push(chunk);
      done();
    },
  });
  const { writer } = createMessageIO(framing, new PassThrough(), out);
  await Promise.all(messages.map((message) => writer.write(message)));
  return Buffer.concat(parts);
}

function cutAt(bytes: Buffer, points: number[]): Buffer[] {
  const cuts = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  return chunks.filter((chunk) => chunk.length > 0);
}

const request = (id: number, params: object = {}): Message => ({ jsonrpc: '2.0', id, method: 'tools/call', params }) as Message;

describe.each(FRAMINGS)('%s framing', (framing) => {
  it('round-trips messages from the writer to the reader', async () => {
    const wire = new PassThrough();
    const { reader, writer } = createMessageIO(framing, wire, wire);
    const received: unknown[] = [];
    reader.listen((message) => received.push(message));
    const closed = new Promise<void>((resolve) => reader.onClose(resolve));
    const messages = [request(1, { text: 'héllo € 😀' }), request(2), { jsonrpc: '2.0', method: 'notifications/initialized' } as Message];
    for (const message of messages) await writer.write(message);
    writer.end();
    await closed;
    expect(received).toEqual(messages);
  });

  it('delivers many messages that arrive in one chunk, in order', async () => {
    const messages = Array.from({ length: 50 }, (_, i) => request(i));
    const seen = await openReader(framing).feed([Buffer.concat(messages.map((m) => frame(framing, m)))]);
    expect(seen.messages).toEqual(messages);
  });

  it('reassembles a message that arrives one byte at a time', async () => {
    const bytes = frame(framing, request(7, { name: 'split' }));
    const seen = await openReader(framing).feed([...bytes].map((byte) => Buffer.from([byte])));
    expect(seen.messages).toEqual([request(7, { name: 'split' })]);
  });

  it('decodes multi-byte UTF-8 split at every byte boundary', async () => {
    const message = request(1, { text: '€ 😀 ü 漢字' });
    const bytes = Buffer.concat([frame(framing, message), frame(framing, request(2))]);
    for (let at = 1; at < bytes.length; at++) {
      const seen = await openReader(framing).feed([bytes.subarray(0, at), bytes.subarray(at)]);
      expect(seen.messages).toEqual([message, request(2)]);
    }
  });

  it('decodes exactly what was written, however the bytes are chunked (property)', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    const message = fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.nat(),
      method: fc.string({ unit: 'grapheme', maxLength: 16 }),
      params: fc.dictionary(
        text.filter((key) => key !== '__proto__'),
        fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
        { maxKeys: 4 },
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 24 }), async (messages, points) => {
        const bytes = await encode(framing, messages as Message[]);
        const seen = await openReader(framing).feed(cutAt(bytes, points));
        expect(seen.messages).toEqual(messages);
        expect(seen.noise).toEqual([]);
        expect(seen.errors).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('decodes a 5 MB message fed in 64 KB chunks', async () => {
    const message = request(1, { blob: 'x'.repeat(5 * 1024 * 1024) });
    const bytes = frame(framing, message);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 64 * 1024) chunks.push(bytes.subarray(at, at + 64 * 1024));
    const seen = await openReader(framing).feed(chunks);
    expect(seen.messages).toEqual([message]);
  });

  it('skips a body that is not a JSON object, reports it as noise and goes on', async () => {
    const { feed } = openReader(framing);
    const junk = framing === 'newline' ? Buffer.from('not json\n') : Buffer.from('Content-Length: 8\r\n\r\nnot json');
    const seen = await feed([junk, frame(framing, 42), frame(framing, [1]), frame(framing, request(3))]);
    expect(seen.noise).toEqual(['not json', '42', '[1]']);
    expect(seen.messages).toEqual([request(3)]);
    expect(seen.errors).toEqual([]);
  });

  it('closes with a protocol-error, once, when a message is over maxMessageBytes', async () => {
    const { feed, stream } = openReader(framing, { maxMessageBytes: 64 });
    const seen = await feed([frame(framing, request(1)), frame(framing, request(2, { pad: 'x'.repeat(100) })), frame(framing, request(3))]);
    expect(seen.messages).toEqual([request(1)]);
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toBeInstanceOf(McpError);
    expect(seen.errors[0]).toMatchObject({ code: 'protocol-error', message: expect.stringMatching(/^message exceeds the limit of 64 bytes/) });
    expect(seen.closes).toBe(1);
    expect(stream.listenerCount('data')).toBe(0);
  });

  it('accepts a message of exactly maxMessageBytes', async () => {
    const message = request(1, { pad: '' });
    const size = Buffer.byteLength(JSON.stringify(message));
    const seen = await openReader(framing, { maxMessageBytes: size }).feed([frame(framing, message)]);
    expect(seen.messages).toEqual([message]);
    expect(seen.errors).toEqual([]);
  });

  it('reports a stream error and closes once on end', async () => {
    const { stream, seen, closed } = openReader(framing);
    const boom = new Error('read failed');
    stream.destroy(boom);
    await closed;
    expect(seen.errors).toEqual([boom]);
    expect(seen.closes).toBe(1);
  });

  it('removes every stream listener on dispose, and the listen disposable does too', () => {
    const events = ['data', 'end', 'close', 'error'] as const;
    const a = openReader(framing);
    expect(events.map((e) => a.stream.listenerCount(e))).toEqual([1, 1, 1, 1]);
    a.reader.dispose();
    a.reader.dispose();
    expect(events.map((e) => a.stream.listenerCount(e))).toEqual([0, 0, 0, 0]);
    const b = openReader(framing);
    b.listening.dispose();
    b.listening.dispose();
    expect(events.map((e) => b.stream.listenerCount(e))).toEqual([0, 0, 0, 0]);
  });

  it('reports a callback that throws as an error and keeps delivering', async () => {
    const stream = new PassThrough();
    const { reader } = createMessageIO(framing, stream, new PassThrough());
    const errors: Error[] = [];
    const received: unknown[] = [];
    reader.onError((error) => errors.push(error));
    const closed = new Promise<void>((resolve) => reader.onClose(resolve));
    reader.listen((message) => {
      received.push(message);
      if (received.length === 1) throw new Error('handler bug');
    });
    stream.end(Buffer.concat([frame(framing, request(1)), frame(framing, request(2))]));
    await closed;
    expect(errors.map((e) => e.message)).toEqual(['handler bug']);
    expect(received).toEqual([request(1), request(2)]);
  });
});

describe('LineMessageReader', () => {
  it('accepts \\r\\n endings and ignores empty and blank lines', async () => {
    const seen = await openReader('newline').feed(['\n\r\n   \n', `${JSON.stringify(request(1))}\r\n`, '\t\r\n', `${JSON.stringify(request(2))}\r`, '\n']);
    expect(seen.messages).toEqual([request(1), request(2)]);
    expect(seen.noise).toEqual([]);
  });

  it('treats every JSON value that is not an object as noise', async () => {
    const seen = await openReader('newline').feed(['42\n"x"\n[1]\nnull\ntrue\n{"jsonrpc":"2.0","method":"m"}\n']);
    expect(seen.noise).toEqual(['42', '"x"', '[1]', 'null', 'true']);
    expect(seen.messages).toEqual([{ jsonrpc: '2.0', method: 'm' }]);
  });

  it('cuts a long noise line to 1000 characters plus an ellipsis', async () => {
    const seen = await openReader('newline').feed([`${'n'.repeat(5000)}\n`]);
    expect(seen.noise).toEqual([`${'n'.repeat(1000)}…`]);
  });

  it('parses a trailing line without a newline at EOF, or reports it as noise', async () => {
    const message = await openReader('newline').feed([JSON.stringify(request(1))]);
    expect(message.messages).toEqual([request(1)]);
    expect(message.closes).toBe(1);
    const noise = await openReader('newline').feed(['{"jsonrpc":"2.0","id":1,"res']);
    expect(noise.noise).toEqual(['{"jsonrpc":"2.0","id":1,"res']);
    expect(noise.closes).toBe(1);
  });

  it('gives up on an endless line after about maxMessageBytes, without buffering the rest', async () => {
    const limit = 1024;
    const { stream, reader, seen } = openReader('newline', { maxMessageBytes: limit });
    const chunk = Buffer.alloc(100, 'a');
    let written = 0;
    let writtenAtError = -1;
    reader.onError(() => (writtenAtError = written));
    while (written < 10 * limit) {
      written += chunk.length;
      stream.write(chunk);
      await tick();
    }
    expect(writtenAtError).toBeGreaterThan(limit);
    expect(writtenAtError).toBeLessThanOrEqual(limit + chunk.length);
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toMatchObject({ code: 'protocol-error' });
    expect(seen.closes).toBe(1);
    expect(stream.listenerCount('data')).toBe(0);
    stream.end('\n{"jsonrpc":"2.0","method":"late"}\n');
    await tick();
    expect(seen).toMatchObject({ messages: [], noise: [], closes: 1 });
  });

  it('counts a line by its bytes without the \\r of \\r\\n', async () => {
    const body = JSON.stringify(request(1));
    const seen = await openReader('newline', { maxMessageBytes: Buffer.byteLength(body) }).feed([`${body}\r`, '\n']);
    expect(seen.messages).toEqual([request(1)]);
  });
});

describe('ContentLengthMessageReader', () => {
  it('ignores other headers and matches the header name case-insensitively', async () => {
    const body = JSON.stringify(request(1, { text: '€' }));
    const seen = await openReader('content-length').feed([
      `content-length: ${Buffer.byteLength(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${body}`,
    ]);
    expect(seen.messages).toEqual([request(1, { text: '€' })]);
  });

  it('rejects an announced length over the limit at once, before the body', async () => {
    const { stream, seen, closed } = openReader('content-length', { maxMessageBytes: 1024 });
    stream.write('Content-Length: 999999999\r\n\r\n');
    await closed;
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toMatchObject({ code: 'protocol-error', message: expect.stringContaining('999999999') });
    expect(seen.closes).toBe(1);
    expect(stream.listenerCount('data')).toBe(0);
  });

  it.each([
    ['a length that is not a number', 'Content-Length: abc\r\n\r\n{}'],
    ['no Content-Length', 'Content-Type: application/json\r\n\r\n{}'],
    ['a header line without a name', 'hello there\r\nContent-Length: 2\r\n\r\n{}'],
    ['a header block that never ends', 'X'.repeat(10000)],
  ])('closes with a protocol-error on %s', async (_case, input) => {
    const seen = await openReader('content-length').feed([input, frame('content-length', request(1))]);
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toMatchObject({ code: 'protocol-error', message: expect.stringMatching(/^malformed Content-Length header/) });
    expect(seen.closes).toBe(1);
    expect(seen.messages).toEqual([]);
  });

  it('reports a frame cut off by EOF as noise', async () => {
    const seen = await openReader('content-length').feed([frame('content-length', request(1)), 'Content-Length: 50\r\n\r\n{"jsonrpc":"2.0"}']);
    expect(seen.messages).toEqual([request(1)]);
    expect(seen.noise).toEqual(['{"jsonrpc":"2.0"}']);
    expect(seen.closes).toBe(1);
  });
});

describe.each([
  ['LineMessageWriter', (w: Writable) => new LineMessageWriter(w)],
  ['ContentLengthMessageWriter', (w: Writable) => new ContentLengthMessageWriter(w)],
])('%s', (_name, createWriter) => {
  /** A stream that takes 1 ms per write and asks for 'drain' after 16 bytes. */
  function slowStream(fail?: (chunk: Buffer) => Error | undefined) {
    const chunks: Buffer[] = [];
    const stream = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        setTimeout(() => done(fail?.(chunk)), 1);
      },
    });
    let writesWhileCongested = 0;
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((...args: unknown[]) => {
      if (stream.writableNeedDrain) writesWhileCongested++;
      return write(...args);
    }) as typeof stream.write;
    return { stream, chunks, writesWhileCongested: () => writesWhileCongested };
  }

  it('waits for drain, and writes every message whole, once, in order', async () => {
    const { stream, chunks, writesWhileCongested } = slowStream();
    const writer = createWriter(stream);
    const messages = Array.from({ length: 40 }, (_, i) => request(i, { pad: '€'.repeat(i * 7) }));
    const finished = new Promise((resolve) => stream.on('finish', resolve));
    const writes = messages.map((message) => writer.write(message));
    writer.end();
    await Promise.all(writes);
    await finished;
    expect(writesWhileCongested()).toBe(0);
    const framing: Framing = writer instanceof LineMessageWriter ? 'newline' : 'content-length';
    const frames = messages.map((message) => Buffer.from(frame(framing, message)));
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat(frames));
    // Frames are joined into writes, never split across them.
    const ends = new Set(frames.map((_, i) => frames.slice(0, i + 1).reduce((n, f) => n + f.length, 0)));
    let offset = 0;
    for (const chunk of chunks) expect(ends.has((offset += chunk.length))).toBe(true);
  });

  it('writes a lone frame before the event loop polls again, and the frames of one turn in one write', async () => {
    // A sequential call's frame that waited for a later turn (an immediate, a timer) would add
    // that wait to every hop of the call: the pool daemon's relay has two such hops more.
    const writes: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push(chunk.toString());
        done();
      },
    });
    const writer = createWriter(stream);
    const failed: unknown[] = [];
    const post = (id: number) => writer.post(request(id), (error) => failed.push(error));
    // Scheduled before the post: it runs before anything the writer could defer to an immediate or a timer.
    const seenAtNextPoll = new Promise<number>((resolve) => setImmediate(() => resolve(writes.length)));
    post(1);
    expect(await seenAtNextPoll).toBe(1);
    const seenAfterBurst = new Promise<number>((resolve) => setImmediate(() => resolve(writes.length)));
    post(2);
    post(3);
    post(4);
    expect(await seenAfterBurst).toBe(2);
    const framing: Framing = writer instanceof LineMessageWriter ? 'newline' : 'content-length';
    expect(writes).toEqual([frame(framing, request(1)).toString(), [2, 3, 4].map((id) => frame(framing, request(id)).toString()).join('')]);
    expect(failed).toEqual([]);
  });

  it('rejects and reports queued and later writes once the stream fails', async () => {
    const broken = new Error('EPIPE');
    const { stream } = slowStream((chunk) => (chunk.includes('"id":2') ? broken : undefined));
    const writer = createWriter(stream);
    const reported: [Error, Message | undefined, number | undefined][] = [];
    writer.onError((event) => reported.push(event));
    await writer.write(request(1));
    // Written together in the next turn, in the failing write.
    const results = await Promise.allSettled([2, 3, 4].map((id) => writer.write(request(id))));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    await expect(writer.write(request(5))).rejects.toBe(broken);
    expect(reported.map(([error, message, count]) => [error, (message as { id?: number }).id, count])).toEqual([
      [broken, 2, 1],
      [broken, 3, 2],
      [broken, 4, 3],
      [broken, 5, 4],
    ]);
  });

  it('rejects a write after the stream is destroyed, and fires onClose', async () => {
    const stream = new PassThrough();
    const writer = createWriter(stream);
    const reported: [Error, Message | undefined, number | undefined][] = [];
    writer.onError((event) => reported.push(event));
    const closed = new Promise<void>((resolve) => writer.onClose(resolve));
    stream.destroy();
    await expect(writer.write(request(1))).rejects.toThrow(/closed/);
    await closed;
    await expect(writer.write(request(2))).rejects.toThrow(/closed/);
    expect(reported.map(([, message, count]) => [(message as { id?: number }).id, count])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('rejects a message that cannot be serialised without throwing', async () => {
    const writer = createWriter(new PassThrough());
    const circular: Record<string, unknown> = { jsonrpc: '2.0', method: 'm' };
    circular.self = circular;
    const errors: unknown[] = [];
    writer.onError((e) => errors.push(e));
    await expect(writer.write(circular as Message)).rejects.toMatchObject({ code: 'protocol-error', cause: expect.any(TypeError) });
    // Only that message was bad: the stream is not reported broken and goes on.
    expect(errors).toEqual([]);
    await expect(writer.write(request(1))).resolves.toBeUndefined();
  });
});

describe('createMessageIO', () => {
  it('rejects an unknown framing and a bad maxMessageBytes with invalid-config', () => {
    const io = (framing: string, options?: FramingOptions) => () =>
      createMessageIO(framing as Framing, new PassThrough(), new PassThrough(), options);
    expect(io('lsp')).toThrow(expect.objectContaining({ code: 'invalid-config', message: expect.stringContaining('`lsp` (string)') }));
    expect(io('newline', { maxMessageBytes: 0 })).toThrow(expect.objectContaining({ code: 'invalid-config' }));
    expect(io('content-length', { maxMessageBytes: 1.5 })).toThrow(expect.objectContaining({ code: 'invalid-config' }));
  });
});
