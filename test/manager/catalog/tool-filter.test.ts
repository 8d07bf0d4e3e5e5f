import { McpServerManager } from '../../../src/manager/manager.js';
import { parseConfig } from '../../../src/manager/config/config.js';
import { toolPredicate } from '../../../src/manager/catalog/tool-filter.js';
import { fixture, textOf } from '../../support/fixtures.js';

const TOOLS = ['read_file', 'write_file', 'delete_file', 'delete_all', 'list_dir'];

describe('tool filters', () => {
  it('match exact names and * globs; allow narrows, deny removes', () => {
    const only = toolPredicate({ allow: ['read_*', 'list_dir'], deny: ['read_secret'] })!;
    expect(TOOLS.concat('read_secret').filter(only)).toEqual(['read_file', 'list_dir']);
    const noDelete = toolPredicate({ deny: ['delete_*'] })!;
    expect(TOOLS.filter(noDelete)).toEqual(['read_file', 'write_file', 'list_dir']);
    expect(toolPredicate({ deny: ['*file*'] })!('a.file.b')).toBe(false);
    expect(toolPredicate({ allow: ['a.b'] })!('aXb')).toBe(false); // `.` is literal
    expect(toolPredicate({ allow: [] })!('anything')).toBe(false);
    expect(toolPredicate({})).toBeUndefined();
    expect(toolPredicate({ deny: [] })).toBeUndefined();
  });

  it('are validated in the config, naming the server, the field and the value', () => {
    const entries = parseConfig({
      mcpServers: {
        ok: { command: 'x', tools: { allow: ['a*'], deny: ['ab'] } },
        notObject: { command: 'x', tools: ['a'] },
        badList: { command: 'x', tools: { deny: 'delete_*' } },
        badItem: { command: 'x', tools: { allow: ['a', 3] } },
        badKey: { command: 'x', tools: { only: ['a'] } },
      },
    });
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
    expect(byName.ok).toMatchObject({ kind: 'stdio', config: { tools: { allow: ['a*'], deny: ['ab'] } } });
    const message = (name: string) => (byName[name] as { error: Error }).error.message;
    expect(message('notObject')).toBe('server "notObject": config field "tools" must be an object { allow?, deny? }, got ["a"] (array)');
    expect(message('badList')).toBe('server "badList": config field "tools.deny" must be an array of tool names or * globs, got "delete_*" (string)');
    expect(message('badItem')).toBe('server "badItem": config field "tools.allow[1]" must be a non-empty tool name or * glob, got 3 (number)');
    expect(message('badKey')).toBe('server "badKey": config field "tools.only" is not a tool filter field; use "allow" or "deny"');
  });

  describe('in a manager', () => {
    let manager: McpServerManager;
    beforeEach(() => {
      manager = McpServerManager.fromConfig({
        mcpServers: {
          fs: { ...fixture('records-calls.mjs', JSON.stringify(TOOLS)), tools: { deny: ['delete_*'] } },
          ro: { ...fixture('records-calls.mjs', JSON.stringify(TOOLS)), tools: { allow: ['read_*', 'list_*', 'calls_received'] } },
        },
      });
    });
    afterEach(() => manager.shutdown());
    const received = async (server: string) => JSON.parse(textOf(await manager.callServerTool(server, 'calls_received'))) as string[];

    it('hide config-filtered tools from listings, search and calls; the server receives nothing', async () => {
      const names = (await manager.listTools()).map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(['mcp__fs__read_file', 'mcp__fs__write_file', 'mcp__fs__list_dir', 'mcp__ro__read_file', 'mcp__ro__list_dir']),
      );
      for (const hidden of ['mcp__fs__delete_file', 'mcp__fs__delete_all', 'mcp__ro__write_file', 'mcp__ro__delete_file']) expect(names).not.toContain(hidden);
      expect(manager.status().fs.tools).toBe(4);

      const found = await manager.searchTools('delete file', { limit: 20 });
      expect(found.map((m) => m.name).filter((n) => n.includes('delete'))).toEqual([]);
      expect(await manager.searchTools('mcp__fs__delete_file')).not.toContainEqual(expect.objectContaining({ name: 'mcp__fs__delete_file' }));

      await expect(manager.callTool('mcp__fs__delete_file')).rejects.toMatchObject({ code: 'unknown-tool', server: 'fs' });
      await expect(manager.callServerTool('fs', 'delete_all')).rejects.toMatchObject({ code: 'unknown-tool', server: 'fs' });
      await expect(manager.callServerTool('ro', 'write_file')).rejects.toMatchObject({ code: 'unknown-tool', server: 'ro' });
      expect(textOf(await manager.callTool('mcp__fs__write_file'))).toBe('called write_file');
      expect(await received('fs')).toEqual(['write_file', 'calls_received']);
      expect(await received('ro')).toEqual(['calls_received']);
    });

    it('hide session-filtered tools from that session only', async () => {
      const session = manager.session({ tools: { deny: ['write_*'] } });
      const readOnly = manager.session({ servers: ['fs'], tools: { allow: ['read_file'] } });
      expect((await session.listTools()).map((t) => t.name)).not.toContain('mcp__fs__write_file');
      expect((await readOnly.listTools()).map((t) => t.name)).toEqual(['mcp__fs__read_file']);
      expect((await readOnly.searchTools('list directory')).map((m) => m.name)).toEqual([]);
      expect((await readOnly.searchTools('read file')).map((m) => m.name)).toEqual(['mcp__fs__read_file']);
      expect((await session.searchTools('write file', { limit: 20 })).map((m) => m.name).filter((n) => n.includes('write'))).toEqual([]);

      await expect(session.callTool('mcp__fs__write_file')).rejects.toMatchObject({ code: 'unknown-tool' });
      await expect(session.callServerTool('fs', 'write_file')).rejects.toMatchObject({ code: 'unknown-tool' });
      await expect(readOnly.callTool('mcp__fs__list_dir')).rejects.toMatchObject({ code: 'unknown-tool' });
      expect(textOf(await readOnly.callTool('mcp__fs__read_file'))).toBe('called read_file');
      expect(await received('fs')).toEqual(['read_file', 'calls_received']);
      // The manager itself still sees the tool the sessions hide.
      expect((await manager.listTools()).map((t) => t.name)).toContain('mcp__fs__write_file');
      expect(() => manager.session({ tools: { allow: 'x' } as never })).toThrow(expect.objectContaining({ code: 'invalid-arguments' }));
    });
  });
});
