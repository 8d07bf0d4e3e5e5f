import { chmodSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bwrapArgs, type SandboxPlan } from '../../../src/transport/stdio/sandbox/bwrap.js';
import { macosProfile } from '../../../src/transport/stdio/sandbox/macos.js';
import { DEFAULT_SANDBOX } from '../../../src/transport/stdio/sandbox/policy.js';
import { serverFiles } from '../../../src/transport/stdio/sandbox/server-files.js';
import { McpError } from '../../../src/errors.js';
import { ServerProcess } from '../../../src/transport/stdio/server-process.js';
import { tempDir } from '../../support/temp-dirs.js';
import { nodeSpec } from '../process-probes.js';

const plan = (over: Partial<SandboxPlan> = {}): SandboxPlan => ({
  policy: DEFAULT_SANDBOX,
  serverFiles: ['/opt/server'],
  home: '/home/ada',
  cwd: '/',
  command: '/usr/bin/node',
  args: ['/opt/server/index.js', '--flag'],
  userNamespace: true,
  ...over,
});

/** The mount operations in order, as `--op path` (targets only). */
function mounts(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const op = args[i]!;
    if (op === '--') break;
    if (op === '--ro-bind' || op === '--bind' || op === '--symlink') out.push(`${op} ${args[(i += 2)]}`);
    else if (op === '--tmpfs' || op === '--proc' || op === '--dev' || op === '--remount-ro') out.push(`${op} ${args[++i]}`);
  }
  return out;
}

describe('bwrap command line', () => {
  test('namespaces, no capabilities, dies with its parent, its own session; the command last', () => {
    const args = bwrapArgs(plan());
    for (const flag of ['--die-with-parent', '--new-session', '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net']) expect(args).toContain(flag);
    expect(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2)).toEqual(['--cap-drop', 'ALL']);
    expect(args.slice(-6)).toEqual(['--chdir', '/', '--', '/usr/bin/node', '/opt/server/index.js', '--flag']);
  });

  test('network allowed: no --unshare-net; no user namespace here: no --unshare-user, the rest the same', () => {
    const args = bwrapArgs(plan({ policy: { ...DEFAULT_SANDBOX, network: true }, userNamespace: false }));
    expect(args).not.toContain('--unshare-net');
    expect(args).not.toContain('--unshare-user');
    expect(args).toContain('--unshare-pid');
  });

  test('parents first: the private /tmp and home, then the paths listed under them; secrets hidden after /etc', () => {
    const order = mounts(bwrapArgs(plan({ policy: { ...DEFAULT_SANDBOX, read: ['/home/ada/docs'], write: ['/tmp/out'] } })));
    const at = (op: string) => {
      expect(order).toContain(op);
      return order.indexOf(op);
    };
    expect(at('--tmpfs /tmp')).toBeLessThan(at('--bind /tmp/out'));
    expect(at('--tmpfs /home/ada')).toBeLessThan(at('--ro-bind /home/ada/docs'));
    expect(at('--ro-bind /etc')).toBeLessThan(at('--ro-bind /etc/shadow'));
    expect(order).toContain('--ro-bind /usr');
    expect(order).toContain('--ro-bind /opt/server');
    expect(order).toContain('--proc /proc');
    // /etc/shadow is bound from /dev/null: empty inside.
    const args = bwrapArgs(plan());
    expect(args[args.indexOf('/etc/shadow') - 1]).toBe('/dev/null');
  });

  test('an explicitly listed path wins over the private home at the same depth', () => {
    const order = mounts(bwrapArgs(plan({ policy: { ...DEFAULT_SANDBOX, write: ['/home/ada'] } })));
    expect(order.indexOf('--tmpfs /home/ada')).toBeLessThan(order.indexOf('--bind /home/ada'));
  });
});

describe('macOS profile', () => {
  test('denies by default; reads the system, the server and the read paths; writes only the write paths and its TMPDIR; no network', () => {
    const profile = macosProfile({ policy: { ...DEFAULT_SANDBOX, read: ['/Users/ada/docs'], write: ['/Users/ada/out "x"'] }, serverFiles: ['/opt/server'], tmpdir: '/var/folders/t/lazy' });
    const lines = profile.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['(version 1)', '(deny default)']);
    const read = lines.find((line) => line.startsWith('(allow file-read* '))!;
    for (const path of ['/usr', '/System', '/opt/server', '/Users/ada/docs', '/var/folders/t/lazy']) expect(read).toContain(`(subpath "${path}")`);
    expect(read).toContain('(subpath "/Users/ada/out \\"x\\"")');
    const write = lines.find((line) => line.startsWith('(allow file-write* '))!;
    expect(write).toContain('(subpath "/Users/ada/out \\"x\\"")');
    expect(write).toContain('(subpath "/var/folders/t/lazy")');
    expect(write).not.toContain('/Users/ada/docs');
    expect(lines).toContain('(deny file-read* (subpath "/private/etc/master.passwd") (subpath "/private/etc/sudoers") (subpath "/private/etc/sudoers.d") (subpath "/private/etc/ssh/ssh_host_ecdsa_key") (subpath "/private/etc/ssh/ssh_host_ed25519_key") (subpath "/private/etc/ssh/ssh_host_rsa_key"))');
    expect(lines).toContain('(allow signal (target same-sandbox))');
    expect(lines).not.toContain('(allow network*)');
  });

  test('network allowed', () => {
    expect(macosProfile({ policy: { ...DEFAULT_SANDBOX, network: true }, serverFiles: [], tmpdir: '/t' }).split('\n')).toContain('(allow network*)');
  });
});

describe('what the server needs to see', () => {
  const root = realpathSync(tempDir('lazy-mcp-sandbox-files-'));
  const home = join(root, 'home');
  const project = join(root, 'project');
  beforeAll(() => {
    mkdirSync(join(project, 'node_modules', 'pkg', 'dist'), { recursive: true });
    mkdirSync(join(project, 'node_modules', '.bin'));
    mkdirSync(join(project, 'src'));
    mkdirSync(home);
    writeFileSync(join(project, 'package.json'), '{}');
    writeFileSync(join(project, 'src', 'server.mjs'), '');
    writeFileSync(join(project, 'node_modules', 'pkg', 'dist', 'index.js'), '#!/usr/bin/env node\n');
    chmodSync(join(project, 'node_modules', 'pkg', 'dist', 'index.js'), 0o755);
    symlinkSync('../pkg/dist/index.js', join(project, 'node_modules', '.bin', 'pkg'));
    writeFileSync(join(home, 'package.json'), '{}');
    writeFileSync(join(home, 'loose.mjs'), '');
  });

  test('node script.mjs: node is the system\'s; the script\'s package folder is shown', async () => {
    expect(await serverFiles(process.execPath, [join(project, 'src', 'server.mjs')], '/', '/usr/bin', home)).toEqual({ command: process.execPath, read: [project] });
  });

  test('a node_modules/.bin shim: found on PATH, shown with the whole node_modules its package resolves from', async () => {
    const files = await serverFiles('pkg', ['--stdio'], project, `/nonexistent:${join(project, 'node_modules', '.bin')}:/usr/bin`, home);
    expect(files).toEqual({ command: join(project, 'node_modules', '.bin', 'pkg'), read: [join(project, 'node_modules')] });
  });

  test('a relative script is found from the working directory', async () => {
    expect((await serverFiles(process.execPath, ['--enable-source-maps', 'src/server.mjs'], project, '', home)).read).toEqual([project]);
  });

  test('a script whose package folder is the home folder shows the script alone, never the home', async () => {
    expect((await serverFiles(process.execPath, [join(home, 'loose.mjs')], '/', '', home)).read).toEqual([join(home, 'loose.mjs')]);
  });

  test('a command that is not there fails as ENOENT', async () => {
    await expect(serverFiles('no-such-command-here', [], '/', '/usr/bin', home)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('a sandboxed spawn that cannot be set up', () => {
  test('a missing write path: spawn-failed naming it', async () => {
    const missing = join(tempDir('lazy-mcp-sandbox-missing-'), 'not-made');
    await expect(ServerProcess.spawn(nodeSpec('echo-server.mjs', [], { sandbox: { ...DEFAULT_SANDBOX, write: [missing] } }))).rejects.toMatchObject({
      code: 'spawn-failed',
      message: `server "echo-server": cannot start ${JSON.stringify(process.execPath)}: sandbox.write path ${JSON.stringify(missing)} does not exist; create it first`,
    });
  });

  test('a working directory the sandbox hides: spawn-failed saying how to show it', async () => {
    const cwd = realpathSync(tempDir('lazy-mcp-sandbox-cwd-'));
    await expect(ServerProcess.spawn(nodeSpec('echo-server.mjs', [], { cwd, sandbox: DEFAULT_SANDBOX }))).rejects.toMatchObject({
      code: 'spawn-failed',
      message: expect.stringContaining(`working directory ${JSON.stringify(cwd)} is not visible in the sandbox; add it to sandbox.read or sandbox.write`),
    });
  });

  test('no bwrap on PATH: sandbox-unavailable, and nothing runs', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent/bin';
    try {
      const error = await ServerProcess.spawn(nodeSpec('echo-server.mjs', [], { sandbox: DEFAULT_SANDBOX })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect(error).toMatchObject({ code: 'sandbox-unavailable', message: expect.stringContaining('bubblewrap (`bwrap`) is not on PATH') });
    } finally {
      process.env.PATH = saved;
    }
  });

  test('a command that is not there: spawn-failed as without a sandbox', async () => {
    await expect(ServerProcess.spawn({ name: 'gone', command: 'no-such-command-here', sandbox: DEFAULT_SANDBOX })).rejects.toMatchObject({
      code: 'spawn-failed',
      message: 'server "gone": cannot start "no-such-command-here": command not found (ENOENT); check that it is installed and on PATH',
    });
  });

  test('inheritEnv with a sandbox is invalid-config', async () => {
    await expect(ServerProcess.spawn(nodeSpec('echo-server.mjs', [], { inheritEnv: true, sandbox: DEFAULT_SANDBOX }))).rejects.toMatchObject({ code: 'invalid-config' });
  });

  test('a relative sandbox path given to the API is invalid-config', async () => {
    await expect(ServerProcess.spawn(nodeSpec('echo-server.mjs', [], { sandbox: { ...DEFAULT_SANDBOX, read: ['data'] } }))).rejects.toMatchObject({
      code: 'invalid-config',
      message: 'server "echo-server": `sandbox.read` must be a list of absolute paths, got "data" (string)',
    });
  });
});
