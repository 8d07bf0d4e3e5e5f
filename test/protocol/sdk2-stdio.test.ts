import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '../support/clients.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

// The official SDK v2 server over stdio, as a child process.
describe('McpClient.connect to SDK v2 servers', () => {
  it('speaks 2026-07-28 to a 2026-only server: the initialize refusal leads to server/discover', async () => {
    const record = join(tempDir('lazy-mcp-sdk2-'), 'methods.txt');
    const client = await connect(fixture('sdk2-modern-server.mjs', record), { name: 'modern' });
    expect(client.era).toBe('2026');
    expect(client.protocolVersion).toBe('2026-07-28');
    expect(client.serverInfo).toMatchObject({ name: 'sdk2-modern', version: '2.4.0' });
    expect(client.capabilities).toMatchObject({ tools: { listChanged: true } });
    expect((await client.listTools()).map((t) => t.name)).toEqual(['echo', 'confirm', 'add_tool', 'touch']);
    expect(textOf(await client.callTool('echo', { text: 'hi' }))).toBe('hi');
    expect((await client.readResource('memo://note')).contents).toEqual([{ uri: 'memo://note', text: 'a note' }]);
    await client.ping();
    const received = readFileSync(record, 'utf8').split('\n').filter(Boolean);
    expect(received).toEqual(['initialize', 'server/discover', 'subscriptions/listen', 'tools/list', 'tools/call', 'resources/read', 'server/discover']);
  });

  it('drives a multi round-trip tool call through the host elicitation handler', async () => {
    const asked: string[] = [];
    const client = await connect(fixture('sdk2-modern-server.mjs'), {
      name: 'modern',
      handlers: {
        elicitation: async (request) => {
          asked.push(request.message);
          return { action: 'accept', content: { sure: true } };
        },
      },
    });
    const result = await client.callTool('confirm', { what: 'deploy' });
    expect(textOf(result)).toBe('accept: {"sure":true} state=state for deploy');
    expect(asked).toEqual(['Really deploy?']);
  });

  it('gets list changes and resource updates through subscriptions/listen', async () => {
    const client = await connect(fixture('sdk2-modern-server.mjs'), { name: 'modern' });
    const events: string[] = [];
    client.on('toolsChanged', () => events.push('toolsChanged'));
    client.on('resourceUpdated', (uri: string) => events.push(`updated ${uri}`));
    await client.callTool('add_tool', { name: 'late' });
    expect(await waitFor(() => events.includes('toolsChanged'), 5000)).toBe(true);
    expect((await client.listTools()).map((t) => t.name)).toContain('late');
    await client.subscribeResource('memo://note');
    await client.callTool('touch');
    expect(await waitFor(() => events.includes('updated memo://note'), 5000)).toBe(true);
    await client.unsubscribeResource('memo://note');
    await client.callTool('touch');
    await client.ping();
    expect(events.filter((e) => e.startsWith('updated'))).toEqual(['updated memo://note']);
  });

  it('uses the legacy era with a dual-era server on stdio (initialize goes first there)', async () => {
    const client = await connect(fixture('sdk2-modern-server.mjs', '--dual'), { name: 'dual' });
    expect(client.era).toBe('legacy');
    expect(textOf(await client.callTool('echo', { text: 'old' }))).toBe('old');
  });

  it('speaks 2026 to a dual-era server when told the era', async () => {
    const client = await connect(fixture('sdk2-modern-server.mjs', '--dual'), { name: 'dual', era: '2026' });
    expect(client.era).toBe('2026');
    expect(textOf(await client.callTool('echo', { text: 'new' }))).toBe('new');
  });
});
