import { publicToolNames, sanitize, serverOfPublicName, serverPrefixes, shortHash } from '../../../src/manager/catalog/tool-names.js';

const SAFE = /^[a-zA-Z0-9_-]{1,64}$/;
const namesFor = (server: string, tools: string[]) => publicToolNames(server, serverPrefixes([server]).get(server) as string, tools);

describe('public tool names', () => {
  it('keeps a safe name in its plain form', () => {
    expect(namesFor('fs', ['read_file']).get('read_file')).toBe('mcp__fs__read_file');
  });

  it('replaces each code point outside [a-zA-Z0-9_-] with _', () => {
    expect(sanitize('ünïcode')).toBe('_n_code');
    expect(sanitize('read file.v2')).toBe('read_file_v2');
    expect(sanitize('🙂ok')).toBe('_ok');
  });

  it('never merges read.file and read_file: the changed one gets a hash of the raw names', () => {
    const names = namesFor('fs', ['read.file', 'read_file']);
    expect(names.get('read_file')).toBe('mcp__fs__read_file');
    expect(names.get('read.file')).toBe(`mcp__fs__read_file_${shortHash('fs', 'read.file')}`);
    // The order tools arrive in does not change who keeps the plain form.
    const reversed = namesFor('fs', ['read_file', 'read.file']);
    expect(reversed).toEqual(names);
  });

  it('gives two changed names that collide distinct hashed names', () => {
    const names = namesFor('s', ['a.b', 'a b']);
    expect(names.get('a.b')).not.toBe(names.get('a b'));
    for (const name of names.values()) expect(name).toMatch(SAFE);
  });

  it('shortens names over 64 characters deterministically, keeping them unique', () => {
    const long = 'x'.repeat(100);
    const longer = `${'x'.repeat(100)}y`;
    const names = namesFor('server', [long, longer]);
    expect(names.get(long)).toHaveLength(64);
    expect(names.get(long)).toMatch(SAFE);
    expect(names.get(long)).not.toBe(names.get(longer));
    expect(names.get(long)).toBe(`${`mcp__server__${long}`.slice(0, 57)}_${shortHash('server', long)}`);
    expect(namesFor('server', [long]).get(long)).toBe(names.get(long));
  });

  it('sanitises server names and hashes those that collide after sanitising', () => {
    const prefixes = serverPrefixes(['my.fs', 'my_fs', 'ok']);
    expect(prefixes.get('my_fs')).toBe('my_fs');
    expect(prefixes.get('my.fs')).toBe(`my_fs_${shortHash('my.fs')}`);
    expect(prefixes.get('ok')).toBe('ok');
  });

  it('shortens a long server name so its tools can still be routed from their names alone', () => {
    const server = 's'.repeat(60);
    const prefixes = serverPrefixes([server]);
    const prefix = prefixes.get(server) as string;
    expect(prefix).toBe(`${'s'.repeat(33)}_${shortHash(server)}`);
    const name = publicToolNames(server, prefix, ['a_tool_with_a_long_name_too']).get('a_tool_with_a_long_name_too') as string;
    expect(name.length).toBeLessThanOrEqual(64);
    expect(serverOfPublicName(name, prefixes)).toBe(server);
  });

  it('rewrites the longer of two server parts that could read the same name, whatever the order', () => {
    const prefixes = serverPrefixes(['a', 'a__b']);
    expect(prefixes.get('a')).toBe('a');
    expect(prefixes.get('a__b')).toBe(`a_b_${shortHash('a__b')}`);
    expect(serverPrefixes(['a__b', 'a'])).toEqual(prefixes);
    expect(serverOfPublicName('mcp__a__b__c', prefixes)).toBe('a');
    expect(serverOfPublicName(`mcp__a_b_${shortHash('a__b')}__c`, prefixes)).toBe('a__b');
    expect(serverOfPublicName('mcp__zzz__x', prefixes)).toBeUndefined();
    expect(serverOfPublicName('other', prefixes)).toBeUndefined();
    // A server part alone, with no rival, keeps its plain form.
    expect(serverPrefixes(['a__b']).get('a__b')).toBe('a__b');
  });

  it('gives servers db and db. distinct names for tools _query and query', () => {
    const prefixes = serverPrefixes(['db', 'db.']);
    const first = publicToolNames('db', prefixes.get('db') as string, ['_query']).get('_query');
    const second = publicToolNames('db.', prefixes.get('db.') as string, ['query']).get('query');
    expect(first).not.toBe(second);
    expect(serverOfPublicName(first as string, prefixes)).toBe('db');
    expect(serverOfPublicName(second as string, prefixes)).toBe('db.');
  });

  it('maps every public name of many tricky servers back to exactly its server', () => {
    const servers = ['a', 'a_', 'a__', 'a__b', 'a__b__c', 'a.b', 'a_b', 'db', 'db.', 'db_', '_', '__', 'x'.repeat(50), `${'x'.repeat(50)}y`];
    const tools = ['c', '_c', 'b__c', '__', 'b', 'q.r', 'x'.repeat(70)];
    const prefixes = serverPrefixes(servers);
    expect(new Set(prefixes.values()).size).toBe(servers.length);
    const seen = new Map<string, string>();
    for (const server of servers) {
      for (const name of publicToolNames(server, prefixes.get(server) as string, tools).values()) {
        expect(name).toMatch(SAFE);
        expect(seen.get(name)).toBeUndefined();
        seen.set(name, server);
        expect(serverOfPublicName(name, prefixes)).toBe(server);
      }
    }
  });

  it('gives a tool listed twice one name', () => {
    const names = namesFor('s', ['t', 'u', 't']);
    expect([...names]).toEqual([
      ['t', 'mcp__s__t'],
      ['u', 'mcp__s__u'],
    ]);
  });
});
