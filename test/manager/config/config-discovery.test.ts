import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { discoverConfig, findProjectConfig, hostConfigPaths, readHostConfig } from '../../../src/manager/config/config-discovery.js';
import { tempDir } from '../../support/temp-dirs.js';

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

describe('project config files', () => {
  it('finds the nearest of .mcp.json, .vscode/mcp.json, .cursor/mcp.json from the folder up', () => {
    const root = tempDir();
    const deep = join(root, 'a', 'b', 'c');
    mkdirSync(deep, { recursive: true });
    const cursor = write(join(root, '.cursor', 'mcp.json'), '{"mcpServers":{}}');
    expect(findProjectConfig(deep)).toBe(cursor);
    const vscode = write(join(root, 'a', '.vscode', 'mcp.json'), '{"servers":{}}');
    expect(findProjectConfig(deep)).toBe(vscode);
    // In one folder .mcp.json comes first.
    const plain = write(join(root, 'a', '.mcp.json'), '{"mcpServers":{}}');
    expect(findProjectConfig(deep)).toBe(plain);
    expect(findProjectConfig(root)).toBe(cursor);
  });

  it('prefers $LAZY_MCP_CONFIG (relative to the folder) and reads the file as JSONC', () => {
    const root = tempDir();
    write(join(root, '.mcp.json'), '{"mcpServers":{}}');
    write(join(root, 'conf', 'mine.json'), '{ "mcpServers": { "a": { "command": "x" }, }, // mine\n}');
    const found = discoverConfig({ cwd: root, env: { LAZY_MCP_CONFIG: 'conf/mine.json' } });
    expect(found).toMatchObject({ file: { path: join(root, 'conf', 'mine.json'), document: { mcpServers: { a: { command: 'x' } } }, source: { workspaceFolder: join(root, 'conf') } }, origin: '$LAZY_MCP_CONFIG' });
    expect(discoverConfig({ cwd: root, env: {} }).file?.path).toBe(join(root, '.mcp.json'));
  });

  it('says where it looked when there is nothing', () => {
    const root = tempDir();
    expect(discoverConfig({ cwd: root, env: {} })).toEqual({
      looked: ['$LAZY_MCP_CONFIG (not set)', `.mcp.json, .vscode/mcp.json, .cursor/mcp.json in ${root} and every folder above it`],
    });
  });
});

describe('host configs', () => {
  it('knows each application\'s documented per-OS location', () => {
    const home = '/h';
    expect(hostConfigPaths('claude-desktop', { home, platform: 'darwin', env: {} })).toEqual(['/h/Library/Application Support/Claude/claude_desktop_config.json']);
    expect(hostConfigPaths('claude-desktop', { home, platform: 'win32', env: { APPDATA: '/h/AppData/Roaming' } })).toEqual(['/h/AppData/Roaming/Claude/claude_desktop_config.json']);
    expect(hostConfigPaths('claude-desktop', { home, platform: 'linux', env: {} })).toEqual(['/h/.config/Claude/claude_desktop_config.json']);
    expect(hostConfigPaths('claude-desktop', { home, platform: 'linux', env: { XDG_CONFIG_HOME: '/x' } })).toEqual(['/x/Claude/claude_desktop_config.json']);
    expect(hostConfigPaths('claude-code', { home, platform: 'darwin', env: {} })).toEqual(['/h/.claude.json']);
    expect(hostConfigPaths('cursor', { home, platform: 'win32', env: {} })).toEqual(['/h/.cursor/mcp.json']);
    expect(hostConfigPaths('vscode', { home, platform: 'darwin', env: {} })).toEqual([
      '/h/Library/Application Support/Code/User/mcp.json',
      '/h/Library/Application Support/Code/User/settings.json',
    ]);
    expect(hostConfigPaths('vscode', { home, platform: 'linux', env: {} })[0]).toBe('/h/.config/Code/User/mcp.json');
  });

  it('reads Claude Code\'s user servers overlaid with those of the project holding the folder', () => {
    const home = tempDir();
    const project = join(home, 'src', 'app');
    mkdirSync(join(project, 'lib'), { recursive: true });
    write(
      join(home, '.claude.json'),
      JSON.stringify({
        numStartups: 3,
        mcpServers: { a: { command: 'user-a' }, b: { command: 'user-b' } },
        projects: { [project]: { mcpServers: { b: { command: 'local-b' } } }, '/elsewhere': { mcpServers: { c: { command: 'c' } } } },
      }),
    );
    const found = readHostConfig('claude-code', { home, cwd: join(project, 'lib'), platform: 'linux', env: {} });
    expect(found).toMatchObject({ file: { path: join(home, '.claude.json'), document: { mcpServers: { a: { command: 'user-a' }, b: { command: 'local-b' } } }, source: {} }, origin: '--from claude-code' });
  });

  it('reads VS Code\'s user mcp.json, else the mcp section of settings.json (JSONC, with inputs)', () => {
    const home = tempDir();
    const user = join(home, '.config', 'Code', 'User');
    const options = { home, cwd: home, platform: 'linux' as const, env: {} };
    write(join(user, 'settings.json'), '{\n  "editor.tabSize": 2, // comment\n  "mcp": { "inputs": [{ "id": "k" }], "servers": { "s": { "command": "x" } } },\n}');
    expect(readHostConfig('vscode', options).file?.document).toEqual({ servers: { s: { command: 'x' } }, inputs: [{ id: 'k' }] });
    write(join(user, 'settings.json'), '{ "mcp.servers": { "t": { "command": "y" } } }');
    expect(readHostConfig('vscode', options).file?.document).toEqual({ servers: { t: { command: 'y' } } });
    write(join(user, 'mcp.json'), '{ "servers": { "m": { "command": "z" } } }');
    expect(readHostConfig('vscode', options).file).toMatchObject({ path: join(user, 'mcp.json'), document: { servers: { m: { command: 'z' } } } });
  });

  it('says where it looked for a missing file, and that a file has no servers', () => {
    const home = tempDir();
    expect(readHostConfig('cursor', { home, env: {} })).toEqual({ looked: [join(home, '.cursor', 'mcp.json')] });
    write(join(home, '.claude.json'), '{"numStartups": 1}');
    expect(readHostConfig('claude-code', { home, cwd: home, env: {} })).toEqual({ looked: [`${join(home, '.claude.json')} (it has no MCP servers)`] });
  });
});
