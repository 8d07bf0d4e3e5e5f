import { McpServerManager } from '../../../src/manager/manager.js';
import { fixture, textOf } from '../../support/fixtures.js';

describe('tool schemas hold both sides to the contract', () => {
  let manager: McpServerManager;
  beforeEach(() => {
    manager = McpServerManager.fromConfig({ mcpServers: { f: fixture('host-features.mjs') } });
  });
  afterEach(() => manager.shutdown());

  /** How many read_file calls reached the server. */
  const reached = async () => JSON.parse(textOf(await manager.callServerTool('f', 'record'))).readFileCalls;

  it('arguments that miss inputSchema reject invalid-arguments before anything is sent', async () => {
    await manager.listTools();
    const missing = await manager.callTool('mcp__f__read_file', {}).catch((e) => e);
    expect(missing).toMatchObject({ code: 'invalid-arguments', server: 'f', phase: 'tools/call' });
    expect(missing.message).toBe('server "f": invalid arguments for tool "mcp__f__read_file": `path` is required');
    const wrong = await manager.callServerTool('f', 'read_file', { path: 3, lines: 'x', extra: true }).catch((e) => e);
    expect(wrong.message).toContain('`extra` is not an accepted property');
    expect(wrong.message).toContain('`path` must be string, got integer');
    expect(wrong.message).toContain('`lines` must be integer, got string');
    expect(await reached()).toBe(0);
    expect(textOf(await manager.callTool('mcp__f__read_file', { path: '/a' }))).toBe('read /a');
    expect(await reached()).toBe(1);
  });

  it('the server receives nothing for a rejected call, even on the call that starts it', async () => {
    await expect(manager.callTool('mcp__f__read_file', { lines: 2 })).rejects.toMatchObject({ code: 'invalid-arguments' });
    expect(manager.status().f.state).toBe('ready');
    expect(await reached()).toBe(0);
  });

  it('structuredContent that breaks outputSchema rejects protocol-error naming the path; isError results are not checked', async () => {
    expect((await manager.callTool('mcp__f__typed')).structuredContent).toEqual({ count: 2, items: ['a', 'b'] });
    const bad = await manager.callTool('mcp__f__typed', { bad: true }).catch((e) => e);
    expect(bad).toMatchObject({ code: 'protocol-error', server: 'f', phase: 'tools/call' });
    expect(bad.message).toBe(
      'server "f": tool "typed" returned structuredContent that does not match its outputSchema: `structuredContent.count` must be integer, got string; `structuredContent.items[1]` must be string, got integer',
    );
    const failed = await manager.callTool('mcp__f__typed', { fail: true });
    expect(failed).toMatchObject({ isError: true, structuredContent: { nope: true } });
  });

  it('annotations, titles and icons pass through unchanged', async () => {
    const tool = (await manager.listTools()).find((t) => t.name === 'mcp__f__read_file')!.tool;
    expect(tool).toMatchObject({
      title: 'Read a file',
      annotations: { readOnlyHint: true },
      icons: [{ src: 'https://example.test/icon.png', mimeType: 'image/png' }],
    });
  });
});
