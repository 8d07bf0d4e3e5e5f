import { ToolSearchIndex, type SearchableTool } from '../../src/model/tool-search.js';
import { stem, tokenize } from '../../src/model/tokenize.js';

const tool = (server: string, name: string, description = '', properties: Record<string, object> = {}): SearchableTool => ({
  name: `mcp__${server}__${name}`,
  server,
  tool: { name, description, inputSchema: { type: 'object', properties } },
});

describe('tokenize', () => {
  it('splits names on _, -, dots and camelCase into the same stemmed words', () => {
    for (const name of ['read_text_file', 'readTextFile', 'read-text-file', 'read.text.file', 'ReadTextFILE']) {
      expect(tokenize(name)).toEqual(['read', 'text', 'file']);
    }
    expect(tokenize('HTTPServer getURLs')).toEqual(['http', 'server', 'get', 'url']);
    expect(tokenize('Lists the files of a directory')).toEqual(['list', 'file', 'directory']);
    expect(['create', 'creates', 'created', 'creating'].map(stem)).toEqual(['creat', 'creat', 'creat', 'creat']);
    expect(['entities', 'entity'].map(stem)).toEqual(['entity', 'entity']);
  });
});

describe('tool search index', () => {
  const tools = [
    tool('fs', 'read_file', 'Read the complete contents of a file', { path: {} }),
    tool('fs', 'write_file', 'Create or overwrite a file with new content', { path: {}, content: {} }),
    tool('fs', 'list_directory', 'List the files and folders in a directory', { path: {} }),
    tool('mem', 'search_nodes', 'Search the knowledge graph for nodes matching a query', { query: {} }),
    tool('mem', 'read_graph', 'Read the entire knowledge graph'),
    tool('web', 'fetch', 'Fetch a URL from the internet and return its content as markdown', { url: {} }),
    // Mentions "read file" many times: BM25 likes it, but it is not named read_file.
    tool('web', 'file_reader_docs', 'read file read file read file: documentation about how to read a file', {}),
  ];
  const index = new ToolSearchIndex();
  index.update('fs', tools.filter((t) => t.server === 'fs'));
  index.update('mem', tools.filter((t) => t.server === 'mem'));
  index.update('web', tools.filter((t) => t.server === 'web'));

  it('ranks by BM25 over names, descriptions and parameter names, best first, with scores', () => {
    const found = index.search('directory listing of folders');
    expect(found[0]).toMatchObject({ name: 'mcp__fs__list_directory', server: 'fs', tool: { name: 'list_directory' } });
    for (let i = 1; i < found.length; i++) expect(found[i - 1].score).toBeGreaterThanOrEqual(found[i].score);
    expect(index.search('download a url')[0].name).toBe('mcp__web__fetch'); // a parameter name
    expect(index.search('knowledge graph').map((m) => m.server)).toEqual(['mem', 'mem']);
    expect(index.search('zebra giraffe')).toEqual([]);
  });

  it('puts an exact name first, public or raw, in any case or separator style', () => {
    for (const query of ['read_file', 'READ_FILE', 'readFile', 'mcp__fs__read_file', 'read-file']) {
      expect(index.search(query)[0].name).toBe('mcp__fs__read_file');
    }
    const found = index.search('read_file');
    expect(found[0].score).toBeGreaterThan(found[1].score);
  });

  it('puts a near-exact name (a typo or two) before BM25 matches', () => {
    expect(index.search('raed_file')[0].name).toBe('mcp__fs__read_file');
    expect(index.search('list_directroy')[0].name).toBe('mcp__fs__list_directory');
    expect(index.search('serch_nodes')[0].name).toBe('mcp__mem__search_nodes');
    expect(index.search('fetc')[0].name).toBe('mcp__web__fetch');
  });

  it('honours limit, servers and accept', () => {
    expect(index.search('file', { limit: 2 })).toHaveLength(2);
    expect(index.search('file', { limit: 8 }).length).toBeGreaterThan(2);
    expect(new Set(index.search('read', { servers: new Set(['mem']) }).map((m) => m.server))).toEqual(new Set(['mem']));
    expect(index.search('read_file', { accept: (t) => t.tool.name !== 'read_file' }).map((m) => m.name)).not.toContain('mcp__fs__read_file');
    expect(index.search('read', { limit: 0 })).toEqual([]);
  });

  it('updates one server without touching the others, and a same list is a no-op', () => {
    const local = new ToolSearchIndex();
    const first = [tool('a', 'alpha', 'first letter'), tool('a', 'beta', 'second letter')];
    local.update('a', first);
    local.update('b', [tool('b', 'gamma', 'third letter')]);
    expect(local.size).toBe(3);
    local.update('a', first);
    expect(local.size).toBe(3);
    local.update('a', [tool('a', 'delta', 'fourth letter')]);
    expect(local.size).toBe(2);
    expect(local.search('letter').map((m) => m.tool.name).sort()).toEqual(['delta', 'gamma']);
    expect(local.search('alpha')).toEqual([]);
    local.update('b', undefined);
    expect(local.search('gamma')).toEqual([]);
    expect(local.search('fourth')[0].tool.name).toBe('delta');
  });

  it('scores after replacing and removing servers equal those of an index built fresh with the same tools', () => {
    const make = (server: string, n: number, word: string) =>
      Array.from({ length: n }, (_, i) => tool(server, `${word}_item_${i}`, `${word} the item number ${i} of ${server}`, { [word]: {} }));
    const updated = new ToolSearchIndex();
    updated.update('a', make('a', 30, 'read'));
    updated.update('b', make('b', 20, 'write'));
    updated.update('c', make('c', 10, 'read'));
    updated.update('a', make('a', 5, 'write')); // replaced: its old postings must be gone
    updated.update('c', undefined);
    const fresh = new ToolSearchIndex();
    fresh.update('a', make('a', 5, 'write'));
    fresh.update('b', make('b', 20, 'write'));
    for (const query of ['read item', 'write item', 'item number 3', 'write_item_4', 'wrte_item_4']) {
      expect(updated.search(query, { limit: 30 })).toEqual(fresh.search(query, { limit: 30 }));
    }
    expect(updated.search('read')).toEqual([]);
  });
});
