import { daemonPaths } from '../../../src/share/daemon/paths.js';
import { WIRE_VERSION } from '../../../src/share/daemon/wire.js';

describe("the pool daemon's paths", () => {
  it('name the version and the wire in the socket; versions that differ only in unsafe characters never share one', () => {
    const at = (version: string) => daemonPaths({ runtimeDir: '/tmp/lazy-mcp-paths' }, version, {});
    expect(at('1.2.3').socket).toBe(`/tmp/lazy-mcp-paths/pool-1.2.3-w${WIRE_VERSION}.sock`);
    const sockets = ['1.2.3/a', '1.2.3_a', '1.2.3 a', '1.2.3'].map((v) => at(v).socket);
    expect(new Set(sockets).size).toBe(4);
    expect(at('1.2.3/a').secret).toMatch(/pool-1\.2\.3_a~[0-9a-f]{8}-w\d+\.secret$/);
    // However long the version, the name stays within what a socket path may hold.
    expect(at('9'.repeat(500)).socket.length).toBeLessThan(107);
  });
});
