import { parseConfig, type ServerEntry } from '../../../src/manager/config/config.js';
import { diffEntries } from '../../../src/manager/config/config-diff.js';

const byName = (entries: ServerEntry[]) => new Map(entries.map((e) => [e.name, e]));

describe('diffEntries', () => {
  it('sorts servers into added, removed, changed and unchanged', () => {
    const before = byName(parseConfig({ mcpServers: { a: { command: 'x' }, b: { command: 'y' }, c: { command: 'z' } } }, {}));
    const after = parseConfig({ mcpServers: { a: { command: 'x' }, b: { command: 'y', args: ['--v'] }, d: { command: 'w' } } }, {});
    expect(diffEntries(before, after)).toEqual({ added: ['d'], removed: ['c'], changed: ['b'], unchanged: ['a'] });
  });

  it('ignores key order and notices an entry becoming invalid', () => {
    const before = byName(parseConfig({ mcpServers: { a: { command: 'x', env: { A: '1', B: '2' } } } }, {}));
    expect(diffEntries(before, parseConfig({ mcpServers: { a: { env: { B: '2', A: '1' }, command: 'x' } } }, {})).unchanged).toEqual(['a']);
    expect(diffEntries(before, parseConfig({ mcpServers: { a: { command: 3 } } }, {})).changed).toEqual(['a']);
  });

  it('counts a variable that expands differently as a change', () => {
    const before = byName(parseConfig({ mcpServers: { a: { command: 'x', env: { T: '${TOKEN}' } } } }, { TOKEN: 'one' }));
    expect(diffEntries(before, parseConfig({ mcpServers: { a: { command: 'x', env: { T: '${TOKEN}' } } } }, { TOKEN: 'two' })).changed).toEqual(['a']);
  });
});
