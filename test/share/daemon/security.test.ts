import { chmodSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { daemonStatus } from '../../../src/share/daemon/control.js';
import { hello } from '../../../src/share/daemon/hello.js';
import { daemonPaths } from '../../../src/share/daemon/paths.js';
import { isSecret, readSecret } from '../../../src/share/daemon/secret.js';
import { SocketChannel } from '../../../src/share/daemon/socket-channel.js';
import { ATTACH_METHOD, CONTROL_METHOD, WIRE_VERSION } from '../../../src/share/daemon/wire.js';
import { McpError } from '../../../src/errors.js';
import { fixture, textOf } from '../../support/fixtures.js';
import { sharedManager, sharedOptions } from './support.js';

const echo = { e: fixture('echo-server.mjs') };

/** A hand-made first message on the daemon's socket: what a process that is not our client could send. */
async function handMade(socket: string, method: string, params: object): Promise<unknown> {
  const channel = new SocketChannel(connect(socket), { lost: () => new McpError('unavailable', 'gone') });
  return hello(channel, method, params, 5000).then(() => undefined, (e: unknown) => e);
}

describe('who may use the pool daemon', () => {
  it("a connection without the daemon's secret (none, wrong, another daemon's) is refused; the user's clients carry on", async () => {
    const shared = sharedOptions();
    const manager = sharedManager(echo, shared);
    await manager.callTool('mcp__e__echo', { text: 'x' });
    const version = (await daemonStatus(shared))!.version;
    const paths = daemonPaths(shared, version);
    expect(statSync(paths.secret).mode & 0o777).toBe(0o600);
    const secret = readSecret(paths.secret);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const attach = { wire: WIRE_VERSION, version, pid: process.pid, name: 'e', spec: {} };
    const refused = { code: 'unavailable', message: expect.stringContaining("did not carry the daemon's secret") };
    expect(await handMade(paths.socket, ATTACH_METHOD, attach)).toMatchObject(refused);
    expect(await handMade(paths.socket, ATTACH_METHOD, { ...attach, secret: 'f'.repeat(64) })).toMatchObject(refused);
    expect(await handMade(paths.socket, ATTACH_METHOD, { ...attach, secret: secret.slice(0, 63) })).toMatchObject(refused);
    expect(await handMade(paths.socket, CONTROL_METHOD, { wire: WIRE_VERSION, version, op: 'stop', secret: { toString: () => secret } })).toMatchObject(refused);
    // Not stopped, and still serving.
    expect((await daemonStatus(shared))!.version).toBe(version);
    expect(textOf(await manager.callTool('mcp__e__echo', { text: 'still' }))).toBe('still');
  });

  it('a secret file others can read is no secret: the client refuses it and says why', async () => {
    const shared = sharedOptions();
    const manager = sharedManager(echo, shared);
    await manager.callTool('mcp__e__echo', { text: 'x' });
    const paths = daemonPaths(shared, (await daemonStatus(shared))!.version);
    chmodSync(paths.secret, 0o644);
    const other = sharedManager(echo, shared);
    await expect(other.callTool('mcp__e__echo', { text: 'y' })).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/secret .* can be read or written by others \(mode 644\); refusing/) });
    chmodSync(paths.secret, 0o600);
  });

  it('compares in constant time over digests: any length, any type', () => {
    expect(isSecret('abc', 'abc')).toBe(true);
    expect(isSecret('abc', 'abcd')).toBe(false);
    expect(isSecret('abc', undefined)).toBe(false);
    expect(isSecret('abc', ['abc'])).toBe(false);
    expect(isSecret('', '')).toBe(false);
  });
});
