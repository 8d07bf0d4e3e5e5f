import { parseConfig, type ServerEntry } from '../../../src/manager/config/config.js';
import { DEFAULT_SANDBOX } from '../../../src/transport/stdio/sandbox/policy.js';

const env = { HOME: '/home/ada', DATA: '/srv/data', PATH: process.env.PATH };
const one = (entry: unknown, hostEnv: Record<string, string | undefined> = env, workspaceFolder?: string): ServerEntry =>
  parseConfig({ mcpServers: { s: entry } }, hostEnv, workspaceFolder === undefined ? {} : { workspaceFolder })[0]!;
const stdio = { command: 'node', args: ['server.mjs'] };

describe('"sandbox" on a stdio entry', () => {
  test('true is the default policy: nothing but the system and the server itself, no network', () => {
    expect(one({ ...stdio, sandbox: true })).toMatchObject({ kind: 'stdio', config: { sandbox: DEFAULT_SANDBOX } });
    expect(DEFAULT_SANDBOX).toEqual({ read: [], write: [], network: false, env: [] });
  });

  test('false or absent is no sandbox', () => {
    for (const entry of [{ ...stdio, sandbox: false }, stdio]) expect((one(entry) as { config: object }).config).not.toHaveProperty('sandbox');
  });

  test('paths expand ~, ${workspaceFolder} and ${VAR}, and are normalised', () => {
    const entry = one({ ...stdio, sandbox: { read: ['~', '~/notes/../docs', '${DATA}/in'], write: ['${workspaceFolder}/.cache/'], network: true, env: ['HTTPS_PROXY'] } }, env, '/work/proj');
    expect(entry).toMatchObject({
      kind: 'stdio',
      config: { sandbox: { read: ['/home/ada', '/home/ada/docs', '/srv/data/in'], write: ['/work/proj/.cache'], network: true, env: ['HTTPS_PROXY'] } },
    });
  });

  test.each([
    ['yes', 'field "sandbox" must be true, false or an object { read, write, network, env }, got "yes" (string)'],
    [{ read: 'data' }, 'field "sandbox.read" must be an array of strings, got "data" (string)'],
    [{ write: ['data'] }, 'field "sandbox.write[0]" must be an absolute path (or start with ~ or ${workspaceFolder}), got "data" (string)'],
    [{ read: [''] }, 'field "sandbox.read[0]" must be a non-empty string, got "" (string)'],
    [{ network: 'no' }, 'field "sandbox.network" must be a boolean, got "no" (string)'],
    [{ env: ['NOT A NAME'] }, 'field "sandbox.env[0]" must be an environment variable name, got "NOT A NAME" (string)'],
    [{ paths: ['/x'] }, 'field "sandbox.paths" is not a sandbox field (read, write, network, env)'],
    [{ read: ['${UNSET_FOR_SURE}/x'] }, 'field "sandbox.read[0]" environment variable UNSET_FOR_SURE is not set and has no default'],
  ])('%j is invalid-config naming the field and the value', (sandbox, message) => {
    const entry = one({ ...stdio, sandbox });
    expect(entry.kind).toBe('invalid');
    expect((entry as { error: Error }).error).toMatchObject({ code: 'invalid-config', message: `server "s": config ${message}` });
  });

  test('~ without a known home folder is invalid', () => {
    const entry = one({ ...stdio, sandbox: { read: ['~/x'] } }, { PATH: process.env.PATH, HOME: '' });
    expect((entry as { error: Error }).error.message).toBe('server "s": config field "sandbox.read[0]" uses ~, but the home folder is not known, got "~/x" (string)');
  });

  test('inheritEnv cannot carry the whole environment into a sandbox', () => {
    const entry = one({ ...stdio, inheritEnv: true, sandbox: true });
    expect((entry as { error: Error }).error).toMatchObject({
      code: 'invalid-config',
      message: 'server "s": config field "inheritEnv" cannot be true with "sandbox": list the host variables the server needs in sandbox.env',
    });
  });

  test.each(['http', 'sse'])('is invalid on an %s entry', (type) => {
    const entry = one({ type, url: 'https://example.com/mcp', sandbox: true });
    expect((entry as { error: Error }).error).toMatchObject({
      code: 'invalid-config',
      message: `server "s": config field "sandbox" applies to stdio servers only: an ${type} server runs elsewhere, got true (boolean)`,
    });
  });
});

describe('where no sandbox can be made', () => {
  test('the entry is invalid with sandbox-unavailable, saying what is missing and how to install it', () => {
    const entry = one({ ...stdio, sandbox: true }, { HOME: '/home/ada', PATH: '/nonexistent/bin' });
    expect(entry.kind).toBe('invalid');
    const error = (entry as { error: Error & { code: string; server: string } }).error;
    expect(error).toMatchObject({ code: 'sandbox-unavailable', server: 's' });
    expect(error.message).toMatch(/^server "s": cannot run the server sandboxed: bubblewrap \(`bwrap`\) is not on PATH; install bubblewrap: `sudo apt-get install bubblewrap`/);
    expect(error.message).toMatch(/a sandboxed server is never run without its sandbox$/);
  });

  test('a disabled entry is only disabled', () => {
    expect(one({ ...stdio, sandbox: true, disabled: true }, { PATH: '/nonexistent/bin' }).kind).toBe('disabled');
  });

  test('an unsandboxed entry does not care', () => {
    expect(one(stdio, { PATH: '/nonexistent/bin' }).kind).toBe('stdio');
  });
});
