import { McpClient } from '../../../src/protocol/client.js';
import { attachShared } from '../../../src/share/daemon/attach.js';
import { sharedSpec } from '../../../src/share/daemon/open-shared.js';
import type { ElicitRequest } from '../../../src/protocol/types.js';
import { fixture, textOf } from '../../support/fixtures.js';
import { sharedManager, sharedOptions } from './support.js';

const clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('the client and the pool daemon negotiate the era as any MCP connection does', () => {
  it("a client of both eras speaks the server's era to the daemon: 2026 to a 2026 server's (a question as input_required rounds), legacy to a legacy server's (a question related to the call)", async () => {
    const shared = sharedOptions();
    const asked: string[] = [];
    const manager = sharedManager({ f: fixture('host-features.mjs'), m: fixture('modern-asks.mjs') }, shared, { capabilities: { elicitation: true } });
    const chat = manager.session({ handlers: { elicitation: async (request: ElicitRequest) => (asked.push(request.message), { action: 'accept' as const, content: { name: 'me' } }) } });
    const modern = JSON.parse(textOf(await chat.callTool('mcp__m__ask', { who: 'ada' })));
    expect(modern.answer).toEqual({ action: 'accept', content: { name: 'me' } });
    expect(manager.status().m).toMatchObject({ era: '2026', protocolVersion: '2026-07-28' });
    const legacy = JSON.parse(textOf(await chat.callTool('mcp__f__ask', { message: 'Who?' })));
    expect(legacy.result).toEqual({ action: 'accept', content: expect.objectContaining({ name: 'me' }) });
    expect(asked).toEqual(['Who is ada?', 'Who?']);
    expect(manager.status().f).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25' });
  });

  it('a client that insists on a revision gets it, whatever era the server speaks: a legacy revision, 2026', async () => {
    const shared = sharedOptions();
    const config = { ...fixture('echo-server.mjs'), framing: 'newline' as const };
    const options = { name: 'e' };
    const channel = await attachShared({ name: 'e', spec: sharedSpec(config, options) }, shared);
    const legacy = await McpClient.over(channel, { ...options, protocolVersion: '2025-06-18' });
    clients.push(legacy);
    expect(legacy.era).toBe('legacy');
    expect(legacy.protocolVersion).toBe('2025-06-18');
    expect(textOf(await legacy.callTool('echo', { text: 'old' }))).toBe('old');

    const newest = await McpClient.over(await attachShared({ name: 'e', spec: sharedSpec(config, options) }, shared), { ...options, protocolVersion: '2026-07-28' });
    clients.push(newest);
    expect(newest.era).toBe('2026');
    expect((await newest.listTools()).map((t) => t.name)).toContain('echo');
    expect(textOf(await newest.callTool('echo', { text: 'new' }))).toBe('new');
  });
});
