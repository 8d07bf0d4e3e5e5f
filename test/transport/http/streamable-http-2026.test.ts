import { afterEach, describe, expect, it } from '@jest/globals';
import { StreamableHttpChannel } from '../../../src/transport/http/streamable-http.js';
import { RawClient } from './raw-client.js';
import { abortedCalls, startHandlerServer, type TestHttpServer } from './sdk-servers.js';
import { waitFor } from '../../support/fixtures.js';

const REVISION = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('StreamableHttpChannel, 2026-07-28, against the SDK v2 createMcpHandler', () => {
  const servers: TestHttpServer[] = [];
  const channels: StreamableHttpChannel[] = [];
  afterEach(async () => {
    await Promise.all(channels.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('discovers, then calls with MCP-Protocol-Version, Mcp-Method and Mcp-Name, progress related to the call', async () => {
    const server = await startHandlerServer();
    servers.push(server);
    const channel = new StreamableHttpChannel({ url: server.url, name: 'modern' });
    channels.push(channel);
    const client = new RawClient(channel);
    const discover = await client.request('server/discover', { _meta: envelope });
    expect(discover.result.supportedVersions).toContain(REVISION);
    channel.setProtocolVersion(REVISION);
    const call = await client.request('tools/call', { name: 'count', arguments: { to: 2 }, _meta: { ...envelope, progressToken: 7 } });
    expect(call.result.content[0].text).toBe('counted to 2');
    const progress = client.received.filter((r) => 'method' in r.message && r.message.method === 'notifications/progress');
    expect(progress.map((p) => p.context.relatedTo)).toEqual([call.id, call.id]);
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts[0]?.headers['mcp-method']).toBe('server/discover');
    expect(posts[0]?.headers['mcp-name']).toBeUndefined();
    expect(posts[1]?.headers).toMatchObject({ 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': 'count' });
    for (const post of posts) expect(post.headers['mcp-session-id']).toBeUndefined();
    // No session in this era: no GET stream, no DELETE.
    await channel.close();
    expect(server.requests.every((r) => r.method === 'POST')).toBe(true);
  });

  it('abandon(id) closes that request\'s stream, which cancels it on the server', async () => {
    const server = await startHandlerServer();
    servers.push(server);
    const channel = new StreamableHttpChannel({ url: server.url, name: 'modern' });
    channels.push(channel);
    channel.setProtocolVersion(REVISION);
    const seen: unknown[] = [];
    channel.onMessage((message, context) => seen.push({ message, context }));
    await channel.send({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'hold', arguments: { tag: 'a41' }, _meta: { ...envelope, progressToken: 1 } } });
    expect(await waitFor(() => seen.length === 1)).toBe(true);
    expect(seen[0]).toMatchObject({ context: { relatedTo: 41 } });
    channel.abandon(41);
    expect(await waitFor(() => abortedCalls.includes('a41'), 10000)).toBe(true);
    expect(channel.isOpen).toBe(true);
    // The channel goes on carrying other requests.
    const client = new RawClient(channel);
    const echo = await client.request('tools/call', { name: 'echo', arguments: { text: 'still' }, _meta: envelope });
    expect(echo.result.content[0].text).toBe('still');
    expect(seen.some((s) => (s as { message: { id?: number } }).message.id === 41)).toBe(false);
  });

  it('abandon(id) before the answer\'s headers came aborts the POST and send() settles quietly', async () => {
    const server = await startHandlerServer();
    servers.push(server);
    const channel = new StreamableHttpChannel({ url: server.url, name: 'modern' });
    channels.push(channel);
    channel.setProtocolVersion(REVISION);
    // No progress token: the server answers JSON only when the tool is done, so the POST waits.
    const sent = channel.send({ jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'hold', arguments: { tag: 'a42' }, _meta: envelope } });
    expect(await waitFor(() => server.requests.length === 1)).toBe(true);
    channel.abandon(42);
    await expect(sent).resolves.toBeUndefined();
    expect(await waitFor(() => abortedCalls.includes('a42'), 10000)).toBe(true);
  });
});
