import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../../src/manager/config/config.js';
import { createHttpChannel } from '../../../src/transport/http/create-http-channel.js';
import { SseLegacyChannel } from '../../../src/transport/http/sse-legacy.js';
import { StreamableHttpChannel } from '../../../src/transport/http/streamable-http.js';
import { closeReason } from './raw-client.js';
import { listen } from './sdk-servers.js';

describe('createHttpChannel', () => {
  it('makes the channel the entry names, and a parsed config entry fits it', async () => {
    const [entry] = parseConfig({ mcpServers: { web: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { 'x-a': 'b' } } } }, {});
    if (entry?.kind !== 'http') throw new Error('expected an http entry');
    const controller = new AbortController();
    const http = createHttpChannel(entry.config, { name: 'web', maxMessageBytes: 1000, signal: controller.signal });
    expect(http).toBeInstanceOf(StreamableHttpChannel);
    expect(http.info).toMatchObject({ transport: 'http', url: 'http://127.0.0.1:9/mcp' });
    const reason = closeReason(http);
    controller.abort();
    expect((await reason).code).toBe('closed');

    const server = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages\n\n');
    });
    try {
      const sse = createHttpChannel({ transport: 'sse', url: server.url }, { name: 'old' });
      expect(sse).toBeInstanceOf(SseLegacyChannel);
      expect(sse.info.transport).toBe('sse');
      await sse.close();
    } finally {
      await server.close();
    }
  });
});
