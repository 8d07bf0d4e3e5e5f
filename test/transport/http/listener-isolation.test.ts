import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { JsonRpcMessage } from '../../../src/transport/channel.js';
import { StreamableHttpChannel } from '../../../src/transport/http/streamable-http.js';
import { waitFor } from '../../support/fixtures.js';
import { listen, type TestHttpServer } from './sdk-servers.js';

async function bodyOf(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

describe('HTTP channel listeners', () => {
  let server: TestHttpServer | undefined;
  let channel: StreamableHttpChannel | undefined;
  afterEach(async () => {
    await channel?.close();
    await server?.close();
  });

  it('run isolated: a throwing listener neither stops the others nor fails the send or the stream', async () => {
    server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = await bodyOf(req);
      if (message.method === 'json') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { via: 'json' } }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
      res.write('data: not json\n\n');
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { via: 'sse' } })}\n\n`);
    });
    channel = new StreamableHttpChannel({ url: server.url, name: 'isolated' });
    channel.setProtocolVersion('2025-11-25');
    const received: JsonRpcMessage[] = [];
    const noise: string[] = [];
    channel.onMessage(() => {
      throw new Error('message listener bug');
    });
    channel.onMessage((message) => received.push(message));
    channel.onNoise(() => {
      throw new Error('noise listener bug');
    });
    channel.onNoise((text) => noise.push(text));

    // A JSON body is delivered inside send(): the bug must not become send's rejection.
    await expect(channel.send({ jsonrpc: '2.0', id: 1, method: 'json' } as JsonRpcMessage)).resolves.toBeUndefined();
    expect(received).toEqual([{ jsonrpc: '2.0', id: 1, result: { via: 'json' } }]);

    // SSE events are delivered from the stream reader: every event still gets through.
    await channel.send({ jsonrpc: '2.0', id: 2, method: 'sse' } as JsonRpcMessage);
    expect(await waitFor(() => received.length === 3, 10_000)).toBe(true);
    expect(received.slice(1).map((m) => ('method' in m ? m.method : (m as { result: unknown }).result))).toEqual(['notifications/progress', { via: 'sse' }]);
    expect(noise).toEqual(['not json']);
    expect(channel.isOpen).toBe(true);
  });
});
