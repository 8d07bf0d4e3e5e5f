import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { defaultStateDir } from '../../src/manager/config/state-dir.js';
import { tempDir } from '../support/temp-dirs.js';
import { fixture, textOf } from '../support/fixtures.js';

describe('maxResultBytes', () => {
  const stateDir = join(tempDir(), 'state');
  let manager: McpServerManager;
  beforeAll(() => {
    manager = McpServerManager.fromConfig({ mcpServers: { big: fixture('big-results.mjs'), echo: fixture('echo-server.mjs') } }, { stateDir, maxResultBytes: 4096 });
  });
  afterAll(() => manager.shutdown());
  const savedPath = (text: string) => /the whole result is in (\S+) …\]/.exec(text)?.[1];

  it('cuts long text, keeps images and audio, and saves the whole result in a private file the marker names', async () => {
    const result = await manager.callTool('mcp__big__mixed', { bytes: 200_000 });
    const first = (result.content[0] as { text: string }).text;
    expect(first.startsWith('STARTaaa')).toBe(true);
    expect(first.endsWith('aaaEND')).toBe(true);
    expect(first).toMatch(/lazy-mcp cut \d+ of 200008 bytes here/);
    expect(result.content.slice(1).map((c) => c.type)).toEqual(['image', 'audio', 'text']);
    expect((result.content[1] as { data: string }).data).toHaveLength(4000);
    expect((result.content[3] as { text: string }).text).toBe('short note');

    const file = savedPath(first)!;
    expect(file.startsWith(join(stateDir, 'results'))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'results')).mode & 0o777).toBe(0o700);
    const whole = JSON.parse(readFileSync(file, 'utf8'));
    expect(whole.content[0].text).toHaveLength(200_008);
    expect(whole.content[1]).toEqual(expect.objectContaining({ type: 'image', mimeType: 'image/png' }));
  });

  it('saves a one-text result as plain text; a call may raise or lower the cap', async () => {
    const cut = await manager.callTool('mcp__echo__big', { bytes: 10_000 }, { maxResultBytes: 1000 });
    expect(Buffer.byteLength(textOf(cut))).toBeLessThanOrEqual(1000);
    const file = savedPath(textOf(cut))!;
    expect(file.endsWith('.txt')).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('x'.repeat(10_000));
    const whole = await manager.callServerTool('echo', 'big', { bytes: 10_000 }, { maxResultBytes: 20_000 });
    expect(textOf(whole)).toBe('x'.repeat(10_000));
    const small = await manager.callTool('mcp__echo__echo', { text: 'hi' });
    expect(textOf(small)).toBe('hi');
    await expect(manager.callTool('mcp__echo__echo', { text: 'hi' }, { maxResultBytes: -1 })).rejects.toMatchObject({ code: 'invalid-arguments' });
  });

  it('leaves out a structuredContent over the cap and says where it is', async () => {
    const result = await manager.callServerTool('big', 'structured', { rows: 1000 });
    expect(result.structuredContent).toBeUndefined();
    const note = (result.content.at(-1) as { text: string }).text;
    expect(note).toMatch(/structuredContent of \d+ bytes left out/);
    const file = /the whole result is in (\S+)\]/.exec(note)![1];
    expect(JSON.parse(readFileSync(file, 'utf8')).structuredContent.rows).toHaveLength(1000);
    expect(readdirSync(join(stateDir, 'results')).length).toBe(3);
  });

  it('checks the manager option', () => {
    expect(() => McpServerManager.fromConfig({ mcpServers: {} }, { maxResultBytes: 0 })).toThrow('manager option `maxResultBytes` must be a positive whole number of bytes, got 0 (number)');
  });
});

describe('defaultStateDir', () => {
  it('is a per-user folder for each OS', () => {
    expect(defaultStateDir('linux', { XDG_STATE_HOME: '/x/state' }, '/home/u')).toBe('/x/state/lazy-mcp');
    expect(defaultStateDir('linux', { XDG_STATE_HOME: 'relative' }, '/home/u')).toBe('/home/u/.local/state/lazy-mcp');
    expect(defaultStateDir('linux', {}, '/home/u')).toBe('/home/u/.local/state/lazy-mcp');
    expect(defaultStateDir('darwin', {}, '/Users/u')).toBe('/Users/u/Library/Application Support/lazy-mcp');
    expect(defaultStateDir('win32', { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'C:\\Users\\u')).toContain('lazy-mcp');
  });
});
