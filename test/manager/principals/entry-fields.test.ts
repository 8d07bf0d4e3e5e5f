import { parseConfig } from '../../../src/manager/config/config.js';
import { DEFAULT_INSTANCE_IDLE_MS, DEFAULT_MAX_INSTANCES } from '../../../src/manager/principals/entry-fields.js';

const one = (entry: object) => parseConfig({ mcpServers: { s: entry } }, { HOME: '/home/u', ORG: 'acme' })[0]!;
const errorOf = (entry: object) => {
  const parsed = one(entry);
  return parsed.kind === 'invalid' ? parsed.error.message : `not invalid: ${parsed.kind}`;
};

describe('config of servers per principal', () => {
  it('finds ${principal:NAME} in env, args, headers and url, with defaults for idle stop and instances', () => {
    const stdio = one({ command: 'srv', args: ['--token', '${principal:TOKEN}'], env: { A: '${principal:A_KEY}', HOME: '${HOME}' } });
    expect(stdio).toMatchObject({ kind: 'stdio', config: { env: { A: '${principal:A_KEY}', HOME: '/home/u' }, idleTimeout: DEFAULT_INSTANCE_IDLE_MS } });
    expect(stdio.kind === 'stdio' && stdio.config.instances).toEqual({ mode: 'per-principal', names: ['A_KEY', 'TOKEN'], maxInstances: DEFAULT_MAX_INSTANCES });
    const http = one({ type: 'http', url: 'https://${ORG}.example.invalid/${principal:TEAM}/mcp', headers: { Authorization: 'Bearer ${principal:GH_TOKEN}' }, maxInstances: 3, idleTimeout: 1000 });
    expect(http).toMatchObject({
      kind: 'http',
      config: {
        shownUrl: 'https://***.example.invalid/***/mcp',
        idleTimeout: 1000,
        instances: { mode: 'per-principal', names: ['GH_TOKEN', 'TEAM'], maxInstances: 3, headerNames: ['GH_TOKEN'], url: 'https://acme.example.invalid/${principal:TEAM}/mcp' },
      },
    });
    expect(one({ command: 'srv', perPrincipal: true })).toMatchObject({ config: { instances: { mode: 'per-principal', names: [] } } });
    expect(one({ command: 'srv', instances: 'per-session' })).toMatchObject({ config: { instances: { mode: 'per-session' } } });
    expect(one({ command: 'srv' })).not.toHaveProperty('config.instances');
  });

  it('names the field and the value of a wrong entry', () => {
    expect(errorOf({ command: 'srv', env: { T: '${principal:bad-name}' } })).toBe(
      'server "s": config field "env.T" has ${principal:bad-name}, which must name a credential (letters, digits and _, not starting with a digit)',
    );
    expect(errorOf({ command: '${principal:CMD}' })).toContain('field "command" cannot hold a ${principal:…} value');
    expect(errorOf({ command: 'srv', instances: 'shared', args: ['${principal:T}'] })).toContain('field "instances" is "shared", but the entry uses ${principal:T}');
    expect(errorOf({ command: 'srv', instances: 'per-user' })).toBe('server "s": config field "instances" must be "shared", "per-principal" or "per-session", got "per-user" (string)');
    expect(errorOf({ command: 'srv', perPrincipal: true, maxInstances: 0 })).toBe('server "s": config field "maxInstances" must be a positive whole number, got 0 (number)');
    expect(errorOf({ command: 'srv', maxInstances: 2 })).toContain('field "maxInstances" applies only to a server with instances per principal or per session');
    expect(errorOf({ command: 'srv', perPrincipal: 'yes' })).toBe('server "s": config field "perPrincipal" must be a boolean, got "yes" (string)');
  });
});
