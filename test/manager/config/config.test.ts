import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../../src/manager/config/config.js';
import { tempDir } from '../../support/temp-dirs.js';
import { McpServerManager } from '../../../src/manager/manager.js';

const env = { HOME: '/home/u', TOKEN: 'secret', EMPTY: '' };

describe('config', () => {
  it('reads the mcpServers shape, with every per-server field', () => {
    const [fs] = parseConfig(
      {
        mcpServers: {
          fs: {
            command: 'node',
            args: ['server.js', '${HOME}/data'],
            env: { TOKEN: '${TOKEN}' },
            cwd: '/srv',
            timeout: 5000,
            framing: 'content-length',
            idleTimeout: 60000,
            inheritEnv: true,
            startup: 'eager',
          },
        },
      },
      env,
    );
    expect(fs).toEqual({
      name: 'fs',
      kind: 'stdio',
      config: {
        command: 'node',
        args: ['server.js', '/home/u/data'],
        env: { TOKEN: 'secret' },
        cwd: '/srv',
        timeout: 5000,
        framing: 'content-length',
        idleTimeout: 60000,
        inheritEnv: true,
        startup: 'eager',
      },
    });
  });

  it("reads VS Code's servers shape and JSON text", () => {
    const entries = parseConfig('{ "servers": { "a": { "type": "stdio", "command": "x" } } }', env);
    expect(entries).toMatchObject([{ name: 'a', kind: 'stdio', config: { command: 'x', args: [], startup: 'lazy' } }]);
  });

  it('expands ${VAR:-default}, ${env:VAR}, and treats an empty value as unset for :-', () => {
    const [entry] = parseConfig({ mcpServers: { s: { command: '${MISSING:-node}', args: ['${EMPTY:-fallback}', '${env:TOKEN}', '${EMPTY}'] } } }, env);
    expect(entry).toMatchObject({ config: { command: 'node', args: ['fallback', 'secret', ''] } });
  });

  it('marks a server with an unset variable invalid, naming server, field and variable', () => {
    const [entry] = parseConfig({ mcpServers: { gh: { command: 'x', env: { TOKEN: '${GITHUB_TOKEN}' } } } }, env);
    expect(entry.kind).toBe('invalid');
    expect((entry as { error: Error }).error.message).toBe(
      'server "gh": config field "env.TOKEN" environment variable GITHUB_TOKEN is not set and has no default',
    );
  });

  it.each([
    [{ args: ['x'] }, 'config field "command" is required for a stdio server'],
    [{ command: 42 }, 'config field "command" must be a string, got 42 (number)'],
    [{ command: 'x', args: 'a b' }, 'config field "args" must be an array of strings, got "a b" (string)'],
    [{ command: 'x', args: ['ok', 3] }, 'config field "args[1]" must be a string, got 3 (number)'],
    [{ command: 'x', env: { A: 1 } }, 'config field "env.A" must be a string, got 1 (number)'],
    [{ command: 'x', timeout: -1 }, 'config field "timeout" must be a positive number of milliseconds, got -1 (number)'],
    [{ command: 'x', framing: 'lsp' }, 'config field "framing" must be "newline" or "content-length", got "lsp" (string)'],
    [{ command: 'x', type: 'pipe' }, 'config field "type" must be "stdio", "http", "sse" or "streamable-http", got "pipe" (string)'],
    [{ command: 'x', disabled: 'yes' }, 'config field "disabled" must be a boolean, got "yes" (string)'],
    ['npx fs', 'config entry must be an object, got "npx fs" (string)'],
  ])('marks a bad entry invalid with a message naming the field and value: %j', (entry, message) => {
    const [parsed, other] = parseConfig({ mcpServers: { bad: entry, good: { command: 'x' } } }, env);
    expect(parsed.kind).toBe('invalid');
    expect((parsed as { error: Error }).error).toMatchObject({ code: 'invalid-config', server: 'bad', phase: 'config' });
    expect((parsed as { error: Error }).error.message).toBe(`server "bad": ${message}`);
    expect(other.kind).toBe('stdio');
  });

  it.each([
    ['http', 'http'],
    ['sse', 'sse'],
    ['streamable-http', 'http'],
  ])('reads a %s server as a remote entry, never drops it', (type, transport) => {
    const [entry] = parseConfig({ mcpServers: { web: { type, url: 'https://example.invalid/mcp' } } }, env);
    expect(entry).toEqual({ name: 'web', kind: 'http', config: { transport, url: 'https://example.invalid/mcp', shownUrl: 'https://example.invalid/mcp', headers: {}, startup: 'lazy' } });
  });

  it('expands variables in url too', () => {
    const [entry] = parseConfig({ mcpServers: { web: { type: 'http', url: 'https://${HOST}/mcp' } } }, env);
    expect(entry.kind).toBe('invalid');
    expect((entry as { error: Error }).error.message).toContain('config field "url" environment variable HOST is not set');
  });

  it('treats an entry with only a url as a Streamable HTTP server', () => {
    expect(parseConfig({ mcpServers: { web: { url: 'https://example.invalid/mcp' } } }, env)[0]).toMatchObject({ kind: 'http', config: { transport: 'http' } });
  });

  it('throws invalid-config for a config that is not one at all', () => {
    expect(() => parseConfig('{ nope', env)).toThrow(expect.objectContaining({ code: 'invalid-config' }));
    expect(() => parseConfig({ servers: [] }, env)).toThrow(/must be an object with "mcpServers"/);
  });
});

describe('McpServerManager construction', () => {
  it('spawns nothing and reports every server, good or bad', async () => {
    const manager = McpServerManager.fromConfig({
      mcpServers: {
        ok: { command: process.execPath, args: ['-e', ''] },
        bad: { command: '' },
        web: { type: 'sse', url: 'https://example.invalid/sse' },
        off: { command: process.execPath, disabled: true },
      },
    });
    expect(manager.status()).toEqual({
      ok: { state: 'idle', transport: 'stdio', restarts: 0 },
      bad: { state: 'invalid', transport: 'stdio', restarts: 0, lastError: expect.objectContaining({ code: 'invalid-config' }) },
      web: { state: 'idle', transport: 'sse', url: 'https://example.invalid/sse', restarts: 0 },
      off: { state: 'disabled', transport: 'stdio', restarts: 0 },
    });
    await expect(manager.callServerTool('bad', 'x')).rejects.toMatchObject({ code: 'invalid-config' });
    await expect(manager.callServerTool('off', 'x')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(manager.callServerTool('nope', 'x')).rejects.toMatchObject({ code: 'unknown-server' });
    await manager.shutdown();
  });

  it('rejects manager options that would break every start, naming the option', () => {
    const config = { mcpServers: {} };
    expect(() => McpServerManager.fromConfig(config, { maxMessageBytes: 0 })).toThrow('manager option `maxMessageBytes` must be a positive whole number of bytes, got 0 (number)');
    expect(() => McpServerManager.fromConfig(config, { shutdownGraceMs: -5 })).toThrow(expect.objectContaining({ code: 'invalid-config' }));
  });

  it('lists resources of a named server that cannot run by throwing its error', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { bad: { command: 3 }, web: { type: 'sse', url: 'https://example.invalid', disabled: true }, off: { command: 'x', disabled: true } } });
    await expect(manager.listResources('bad')).rejects.toMatchObject({ code: 'invalid-config' });
    await expect(manager.listResources('web')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(manager.listResourceTemplates('off')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(manager.listResources()).resolves.toEqual([]);
    await manager.shutdown();
  });

  it('reads a config file, and names the file when it is broken', () => {
    const dir = tempDir('lazy-mcp-config-');
    const good = join(dir, 'mcp.json');
    writeFileSync(good, JSON.stringify({ mcpServers: { a: { command: 'x' } } }));
    expect(Object.keys(McpServerManager.fromFile(good).status())).toEqual(['a']);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ "mcpServers": ');
    expect(() => McpServerManager.fromFile(broken)).toThrow(expect.objectContaining({ code: 'invalid-config', message: expect.stringContaining(broken) }));
    expect(() => McpServerManager.fromFile(join(dir, 'missing.json'))).toThrow(/cannot read config file/);
  });
});
