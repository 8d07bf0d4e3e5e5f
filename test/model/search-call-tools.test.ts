import { McpServerManager } from '../../src/manager/manager.js';
import { runSearchAndCall, searchAndCallTools, toOpenAiChatTool } from '../../src/adapters.js';
import { fixture, textOf } from '../support/fixtures.js';

describe('the search-then-call pair', () => {
  let manager: McpServerManager;
  beforeAll(() => {
    manager = McpServerManager.fromConfig({ mcpServers: { fs: { ...fixture('records-calls.mjs', JSON.stringify(['read_file', 'delete_file'])), tools: { deny: ['delete_*'] } } } });
  });
  afterAll(() => manager.shutdown());

  it('finds tools with their schemas and calls them by name; mistakes come back as tool errors', async () => {
    const [search, call] = searchAndCallTools();
    expect(toOpenAiChatTool(search).function.strict).toBe(false); // `limit` is optional and not nullable
    expect(call.tool.name).toBe('call_tool');
    await manager.listTools();
    const session = manager.session();
    const found = await runSearchAndCall(session, 'search_tools', { query: 'read a file' });
    const tools = (found.structuredContent as { tools: { name: string; inputSchema: object }[] }).tools;
    expect(tools[0]).toEqual({ name: 'mcp__fs__read_file', description: 'The read file tool', inputSchema: { type: 'object' } });
    expect(textOf(await runSearchAndCall(session, 'call_tool', { name: 'mcp__fs__read_file' }))).toBe('called read_file');
    const denied = await runSearchAndCall(session, 'call_tool', { name: 'mcp__fs__delete_file' });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('no tool named');
    expect((await runSearchAndCall(session, 'call_tool', { name: 'x', arguments: [1] })).isError).toBe(true);
    expect((await runSearchAndCall(session, 'search_tools', {})).isError).toBe(true);
    expect(textOf(await runSearchAndCall(session, 'other', {}))).toContain('use search_tools or call_tool');
  });
});
