import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';

describe('listeners that throw', () => {
  it('never break a start, a call, the state or the host', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { echo: fixture('echo-server.mjs') } });
    const seen: string[] = [];
    for (const event of ['exit', 'stateChange', 'stderr', 'log', 'toolsChanged'] as const) {
      manager.on(event, () => {
        throw new Error(`${event} listener fails`);
      });
      manager.on(event, async () => {
        throw new Error(`async ${event} listener fails`);
      });
      // A listener after a throwing one still hears the event.
      manager.on(event, () => void seen.push(event));
    }
    try {
      expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'hi' }))).toBe('hi');
      expect(manager.status().echo.state).toBe('ready');
      expect(textOf(await manager.callTool('mcp__echo__log', { data: 'x' }))).toBe('logged');
      await expect(manager.callTool('mcp__echo__crash')).rejects.toMatchObject({ code: 'peer-exited' });
      expect(await waitFor(() => seen.includes('exit') && seen.includes('stderr') && seen.includes('log'))).toBe(true);
      expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'again' }))).toBe('again');
      expect(manager.status().echo.state).toBe('ready');
    } finally {
      await manager.shutdown();
    }
    expect(manager.status().echo.state).toBe('closed');
  });
});
