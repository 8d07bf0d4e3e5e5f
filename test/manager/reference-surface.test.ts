import { McpServerManager } from '../../src/manager/manager.js';
import type { ElicitRequest, HostRequestContext } from '../../src/protocol/types.js';
import { referenceServer, textOf, waitFor } from '../support/fixtures.js';

// The manager's prompts, completion, subscriptions, server info, structured results and
// host handlers against the official reference server.
describe('the client surface against server-everything', () => {
  let manager: McpServerManager;
  const asked: { request: ElicitRequest; ctx: HostRequestContext }[] = [];
  beforeAll(() => {
    manager = McpServerManager.fromConfig(
      { mcpServers: { every: referenceServer('everything', 'stdio') } },
      { handlers: { sampling: async () => ({ role: 'assistant', content: { type: 'text', text: 'from the manager' }, model: 'manager-model' }) } },
    );
  });
  afterAll(() => manager.shutdown());

  it('lists and gets prompts under public names', async () => {
    const prompts = await manager.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['mcp__every__simple-prompt', 'mcp__every__args-prompt', 'mcp__every__completable-prompt']));
    const result = await manager.getPrompt('mcp__every__args-prompt', { city: 'Paris' });
    expect(JSON.stringify(result.messages)).toContain('Paris');
  });

  it('completes a prompt argument, narrowed by the context', async () => {
    const ref = { type: 'ref/prompt' as const, name: 'mcp__every__completable-prompt' };
    expect((await manager.complete('every', ref, { name: 'department', value: 'S' })).values).toEqual(['Sales', 'Support']);
    const names = await manager.complete('every', ref, { name: 'name', value: '' }, { context: { arguments: { department: 'Engineering' } } });
    expect(names.values).toEqual(['Alice', 'Bob', 'Charlie']);
  });

  it('describes the server', async () => {
    const info = await manager.serverInfo('every');
    expect(info).toMatchObject({ serverInfo: { name: 'mcp-servers/everything' }, era: 'legacy', protocolVersion: '2025-11-25' });
    expect(info.capabilities.prompts).toBeDefined();
    expect(typeof info.instructions).toBe('string');
  });

  it('validates structured content against the output schema', async () => {
    const result = await manager.callTool('mcp__every__get-structured-content', { location: 'New York' });
    expect(result.structuredContent).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
    await expect(manager.callTool('mcp__every__get-structured-content', { location: 'Atlantis' })).rejects.toMatchObject({ code: 'invalid-arguments' });
  });

  it("answers sampling with the manager's handler; a session's elicitation handler alone declares nothing", async () => {
    const chat = manager.session({
      handlers: {
        elicitation: async (request, ctx) => {
          asked.push({ request, ctx });
          return { action: 'accept', content: { name: 'Ada Lovelace' } };
        },
      },
    });
    const tools = await chat.listTools();
    const elicit = tools.find((t) => t.tool.name === 'trigger-elicitation-request');
    // Elicitation is declared only when the manager handles it or names it: a session alone does not.
    expect(elicit).toBeUndefined();
    const sampled = await chat.callTool('mcp__every__trigger-sampling-request', { prompt: 'hi', maxTokens: 5 });
    expect(textOf(sampled)).toContain('from the manager');
  });

  it('a declared capability lets the session answer; defaults are applied', async () => {
    const declared = McpServerManager.fromConfig({ mcpServers: { every: referenceServer('everything', 'stdio') } }, { capabilities: { elicitation: true } });
    try {
      const chat = declared.session({
        handlers: {
          elicitation: async (request, ctx) => {
            asked.push({ request, ctx });
            return { action: 'accept', content: { name: 'Ada Lovelace' } };
          },
        },
      });
      const result = await chat.callTool('mcp__every__trigger-elicitation-request');
      expect(asked).toHaveLength(1);
      expect(asked[0].ctx).toMatchObject({ server: 'every', toolCall: { name: 'mcp__every__trigger-elicitation-request' } });
      expect(textOf(result)).toContain('Ada Lovelace');
      // requestedSchema's default for firstLine was filled in before the answer was sent.
      expect(textOf(result)).toContain('It was a dark and stormy night.');
      // URL mode reaches the handler as such.
      await chat.callTool('mcp__every__trigger-url-elicitation', { url: 'https://example.test/login' });
      expect(asked[1].request).toMatchObject({ mode: 'url', url: 'https://example.test/login', elicitationId: expect.any(String) });
    } finally {
      await declared.shutdown();
    }
  });

  it('subscribes to a resource and hears its updates', async () => {
    const [first] = await manager.listResources('every');
    const updates: string[] = [];
    const unsubscribe = await manager.subscribeResource('every', first.resource.uri, (uri) => updates.push(uri));
    await manager.callTool('mcp__every__toggle-subscriber-updates');
    expect(await waitFor(() => updates.length > 0, 15_000, 50)).toBe(true);
    expect(updates[0]).toBe(first.resource.uri);
    await unsubscribe();
  }, 30_000);
});
