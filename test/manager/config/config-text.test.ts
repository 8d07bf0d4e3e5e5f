import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../../src/manager/config/config.js';
import { lineAndColumn, parseConfigText, readConfigFile, workspaceFolderOf } from '../../../src/manager/config/config-text.js';
import { McpServerManager } from '../../../src/manager/manager.js';
import { tempDir } from '../../support/temp-dirs.js';

const env = { TOKEN: 'secret' };

describe('parseConfigText', () => {
  it('reads JSON with comments and trailing commas, as VS Code writes it', () => {
    const text = `{
      // the servers
      "servers": {
        /* one */ "a": { "type": "stdio", "command": "x", "args": ["1", "2",], },
      },
    }`;
    expect(parseConfigText(text)).toEqual({ servers: { a: { type: 'stdio', command: 'x', args: ['1', '2'] } } });
    expect(parseConfigText('\uFEFF{"mcpServers":{}}')).toEqual({ mcpServers: {} });
  });

  it.each([
    ['{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}', 'comma expected at line 4, column 5'],
    ['{ "mcpServers": ', 'value expected at line 1, column 17'],
    ['{\r\n  "a": tru\r\n}', 'unexpected character at line 2, column 8'],
    ['', 'value expected at line 1, column 1'],
  ])('names the line and column of a syntax error: %j', (text, where) => {
    expect(() => parseConfigText(text)).toThrow(expect.objectContaining({ code: 'invalid-config', phase: 'config', message: `config is not valid JSON: ${where}` }));
  });

  it('counts lines and columns from 1, a CRLF as one break', () => {
    expect(lineAndColumn('ab\r\ncd\nef', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\r\ncd\nef', 5)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn('ab\r\ncd\nef', 8)).toEqual({ line: 3, column: 2 });
  });

  it('gives parseConfig text the same line and column', () => {
    expect(() => parseConfig('{ "mcpServers": { "a": 1 ', env)).toThrow(/^config is not valid JSON: closing brace expected at line 1, column 26$/);
  });
});

describe('${workspaceFolder} and ${input:…}', () => {
  it('is the folder holding .vscode for .vscode/mcp.json, else the file\'s folder', () => {
    expect(workspaceFolderOf('/w/proj/.vscode/mcp.json')).toBe('/w/proj');
    expect(workspaceFolderOf('/w/proj/.mcp.json')).toBe('/w/proj');
    expect(workspaceFolderOf('/w/proj/.cursor/mcp.json')).toBe('/w/proj/.cursor');
  });

  it('expands ${workspaceFolder} in a file read from disk', async () => {
    const root = tempDir();
    mkdirSync(join(root, '.vscode'));
    const path = join(root, '.vscode', 'mcp.json');
    writeFileSync(path, '{ "servers": { "s": { "command": "node", "args": ["${workspaceFolder}/server.js"], "cwd": "${workspaceFolder}", }, }, }');
    const file = readConfigFile(path);
    expect(file.source).toEqual({ workspaceFolder: root });
    expect(parseConfig(file.document, env, file.source)[0]).toMatchObject({ kind: 'stdio', config: { args: [`${root}/server.js`], cwd: root } });
    const manager = McpServerManager.fromFile(path);
    expect(manager.status().s.state).toBe('idle');
    await manager.shutdown();
  });

  it('makes a server invalid when ${workspaceFolder} has no file to come from', () => {
    const [entry] = parseConfig({ servers: { s: { command: 'node', args: ['${workspaceFolder}/x.js'] } } }, env);
    expect(entry.kind).toBe('invalid');
    expect((entry as { error: Error }).error.message).toBe(
      'server "s": config field "args[0]" uses ${workspaceFolder}, which is known only for a config read from a file, got "${workspaceFolder}/x.js"',
    );
  });

  it('makes a server with ${input:…} invalid, naming the field, the value and the input, and leaves the others alone', () => {
    const entries = parseConfig(
      {
        inputs: [{ type: 'promptString', id: 'api-key', description: 'Your API key', password: true }],
        servers: {
          gh: { command: 'gh-mcp', env: { TOKEN: 'Bearer ${input:api-key}' } },
          web: { type: 'http', url: 'https://example.invalid/mcp', headers: { 'X-Key': '${input:other}' } },
          ok: { command: 'x', env: { T: '${env:TOKEN}' } },
        },
      },
      env,
    );
    expect(entries.map((e) => e.kind)).toEqual(['invalid', 'invalid', 'stdio']);
    const [gh, web] = entries as { error: { message: string; code: string } }[];
    expect(gh.error).toMatchObject({ code: 'invalid-config' });
    expect(gh.error.message).toBe(
      'server "gh": config field "env.TOKEN" asks VS Code to prompt for input "api-key" ("Your API key"), which lazy-mcp cannot do; set an environment variable and write ${env:NAME} instead, got "Bearer ${input:api-key}"',
    );
    expect(web.error.message).toMatch(/^server "web": config field "headers.X-Key" asks VS Code to prompt for input "other", which/);
  });

  it('gives a file\'s syntax error its path, line and column from fromFile', () => {
    const path = join(tempDir(), 'mcp.json');
    writeFileSync(path, '{\n  "mcpServers": {\n    "a": { "command": "x" },\n    "b" { }\n  }\n}\n');
    expect(() => McpServerManager.fromFile(path)).toThrow(expect.objectContaining({ code: 'invalid-config', message: `${path}: config is not valid JSON: colon expected at line 4, column 9` }));
  });
});

describe('hostile keys', () => {
  it('keeps "__proto__" an ordinary key, as JSON.parse does', () => {
    const value = parseConfigText('{ "mcpServers": { "__proto__": { "command": "x" }, } }') as { mcpServers: Record<string, unknown> };
    expect(Object.keys(value.mcpServers)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(value.mcpServers)).toBe(Object.prototype);
  });
});
