import { McpError } from '../src/errors.js';

describe('McpError', () => {
  it('carries a stable code and only the fields that are known', () => {
    const cause = new Error('boom');
    const err = new McpError('peer-exited', 'server "fs": exited with code 1', { server: 'fs', exitCode: 1, cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('McpError');
    expect(err.code).toBe('peer-exited');
    expect(err.server).toBe('fs');
    expect(err.exitCode).toBe(1);
    expect(err.cause).toBe(cause);
    expect(Object.keys(err)).not.toContain('signal');
  });
});
