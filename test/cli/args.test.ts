import { parseCommandLine, parseToolArguments } from '../../src/cli/args.js';

describe('parseCommandLine', () => {
  it('parses each command with its arguments and the global options anywhere', () => {
    expect(parseCommandLine(['tools', '--server', 'a', '--server', 'b', '--json'])).toEqual({
      action: 'run',
      command: { name: 'tools', servers: ['a', 'b'], long: false },
      options: { json: true, verbose: false },
    });
    expect(parseCommandLine(['tools', '--long'])).toMatchObject({ command: { name: 'tools', long: true } });
    expect(parseCommandLine(['search', 'read', 'a  file', '--limit', '3', '--server', 'fs'])).toMatchObject({ command: { name: 'search', query: 'read a  file', limit: 3, servers: ['fs'] } });
    expect(parseCommandLine(['--config', 'x.json', 'call', 'mcp__a__b', '{"k":1}', '--timeout', '500', '--cache-dir', 'c'])).toEqual({
      action: 'run',
      command: { name: 'call', tool: 'mcp__a__b', args: '{"k":1}', timeout: 500 },
      options: { config: 'x.json', cacheDir: 'c', json: false, verbose: false },
    });
    expect(parseCommandLine(['call', 'mcp__a__b', '--args-file', '-']).action === 'run').toBe(true);
    expect(parseCommandLine(['call', 'mcp__a__b', 'text=hi there', 'n=3', '--max-time', '9000', '--timeout', '100'])).toMatchObject({
      command: { name: 'call', tool: 'mcp__a__b', pairs: ['text=hi there', 'n=3'], timeout: 100, maxTime: 9000 },
    });
    expect(parseCommandLine(['call', 'mcp__a__b', '{"a=b":1}'])).toMatchObject({ command: { args: '{"a=b":1}' } });
    expect(parseCommandLine(['tool', 'mcp__a__b', '--from', 'claude-code'])).toMatchObject({ command: { name: 'tool', tool: 'mcp__a__b' }, options: { from: 'claude-code' } });
    expect(parseCommandLine(['read', 'fs', 'file:///x', '--max-time', '50'])).toMatchObject({ command: { maxTime: 50 } });
    expect(parseCommandLine(['read', 'fs', 'file:///x', '--verbose'])).toMatchObject({ command: { name: 'read', server: 'fs', uri: 'file:///x' }, options: { verbose: true } });
    expect(parseCommandLine(['resources'])).toMatchObject({ command: { name: 'resources', servers: [] } });
    expect(parseCommandLine(['status', '--json'])).toMatchObject({ command: { name: 'status' }, options: { json: true } });
    expect(parseCommandLine(['login', 'gh'])).toMatchObject({ command: { name: 'login', server: 'gh' } });
    expect(parseCommandLine(['login', 'gh', '--principal', 'alice'])).toMatchObject({ command: { name: 'login', server: 'gh', principal: 'alice' } });
  });

  it('answers --help and --version before anything else', () => {
    expect(parseCommandLine(['call', '--help'])).toEqual({ action: 'help' });
    expect(parseCommandLine(['-h'])).toEqual({ action: 'help' });
    expect(parseCommandLine(['--version'])).toEqual({ action: 'version' });
  });

  it.each([
    [[], 'no command given; the commands are tools, search, tool, call, resources, read, status, login, prompts, prompt, serve and daemon'],
    [['list'], 'unknown command "list"; the commands are tools, search, tool, call, resources, read, status, login, prompts, prompt, serve and daemon'],
    [['tols'], 'unknown command "tols"; did you mean tools or tool?'],
    [['stauts'], 'unknown command "stauts"; did you mean status?'],
    [['tools', '--verbos'], 'unknown option --verbos; did you mean --verbose?'],
    [['call', 't', '--maxtime', '5'], 'unknown option --maxtime; did you mean --max-time?'],
    [['tools', '--zzzzzzzz'], 'unknown option --zzzzzzzz'],
    [['call', 't', 'a=1', '{"b":2}'], 'give the call arguments as one JSON object or as key=value pairs, got "{\\"b\\":2}" after "a=1"'],
    [['call', 't', '--max-time', '1.5'], '--max-time must be a positive whole number of milliseconds, got "1.5"'],
    [['tools', '--config', 'a', '--from', 'cursor'], 'give either --config or --from, not both'],
    [['tools', '--from', 'vs-code'], '--from must be one of claude-desktop, claude-code, cursor, vscode, got "vs-code"; did you mean vscode?'],
    [['tool'], '"tool" needs <public-name>'],
    [['status', '--server', 'x'], 'option --server does not apply to "status"'],
    [['tools', '--principal', 'alice'], 'option --principal does not apply to "tools"'],
    [['login', 'gh', '--principal', ''], '--principal needs an id, such as: lazy-mcp login gh --principal alice'],
    [['read', 'fs'], '"read" needs <server> <uri>'],
    [['status', 'extra'], 'unexpected argument "extra" for "status"'],
    [['call', 't', '{}', '--args-file', 'f'], 'give the call arguments either on the command line or with --args-file, not both'],
    [['call', 't', '--timeout=-5'], '--timeout must be a positive whole number of milliseconds, got "-5"'],
    [['call', 't', '--timeout', '-5'], expect.stringMatching(/^Option '--timeout' argument is ambiguous\. Did you forget .*'--timeout=-XYZ'\.$/)],
    [['call', 't', '--timeout', '0'], '--timeout must be a positive whole number of milliseconds, got "0"'],
    [['tools', '--config'], '--config needs a value'],
    [['call', 't', '--max-time'], '--max-time needs a value'],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(expect.objectContaining({ name: 'UsageError', message }));
  });
});

describe('parseToolArguments', () => {
  it('accepts a JSON object only', () => {
    expect(parseToolArguments('{"a":[1]}', 'json-args')).toEqual({ a: [1] });
    expect(() => parseToolArguments('"text"', 'json-args')).toThrow('json-args must be a JSON object such as {"text":"hi"}, got "text"');
    expect(() => parseToolArguments('null', 'json-args')).toThrow('got null');
    expect(() => parseToolArguments('{', '--args-file a.json')).toThrow(/^--args-file a\.json is not valid JSON: /);
  });
});
