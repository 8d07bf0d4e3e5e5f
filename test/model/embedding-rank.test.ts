import { EMBED_BATCH, type EmbedFunction, toolText } from '../../src/model/embedding-rank.js';
import { type SearchableTool, ToolSearchIndex } from '../../src/model/tool-search.js';

const tool = (server: string, name: string, description: string): SearchableTool => ({
  name: `mcp__${server}__${name}`,
  server,
  tool: { name, description, inputSchema: { type: 'object', properties: {} } },
});

// A deterministic embedding: one dimension per concept, words of a concept counted in it.
// "beverage" shares no word with "Makes tea" but shares its dimension, as a real model would.
const CONCEPTS = [
  ['tea', 'beverage', 'drink', 'brew', 'coffee'],
  ['weather', 'rain', 'umbrella', 'forecast'],
  ['file', 'disk', 'document'],
  ['sum', 'add', 'arithmetic', 'numbers'],
];
const vectorOf = (text: string): number[] => {
  const words = text.toLowerCase().split(/[^a-z]+/);
  return CONCEPTS.map((concept) => words.filter((w) => concept.includes(w)).length);
};

/** An embed function that records every text it was asked for. */
function recordingEmbed(): { embed: EmbedFunction; texts: string[]; calls: number } {
  const record = { texts: [] as string[], calls: 0, embed: undefined as unknown as EmbedFunction };
  record.embed = async (texts) => {
    record.calls++;
    record.texts.push(...texts);
    return texts.map(vectorOf);
  };
  return record;
}

const tools = [
  tool('kitchen', 'brew_tea', 'Makes tea'),
  tool('kitchen', 'slice_bread', 'Cuts a loaf into slices'),
  tool('sky', 'umbrella_advice', 'Whether to take an umbrella today'),
  tool('disk', 'read_file', 'Read a file from the disk'),
  tool('calc', 'get_sum', 'Returns the sum of two numbers'),
];
function indexOf(list: SearchableTool[]): ToolSearchIndex {
  const index = new ToolSearchIndex();
  for (const server of new Set(list.map((t) => t.server))) index.update(server, list.filter((t) => t.server === server));
  return index;
}

describe('searchHybrid: a host embedding beside BM25', () => {
  it('finds a tool that shares no word with the query through the embedding, and ranks the lexical match too', async () => {
    const index = indexOf(tools);
    expect(index.search('a hot beverage')).toEqual([]);
    const { embed } = recordingEmbed();
    const found = await index.searchHybrid('a hot beverage', embed, { limit: 2 });
    expect(found[0].name).toBe('mcp__kitchen__brew_tea');
    expect(found).toHaveLength(2);
    expect(found[0].score).toBeGreaterThan(found[1].score);
    // Both rankings agree on read_file for "read a document file": it leads.
    expect((await index.searchHybrid('read a document file', embed))[0].name).toBe('mcp__disk__read_file');
    // "rain" is the embedding's only clue; BM25 has none.
    expect((await index.searchHybrid('will it rain', embed))[0].name).toBe('mcp__sky__umbrella_advice');
  });

  it('keeps an exact name first whatever the embedding says', async () => {
    const index = indexOf(tools);
    const { embed } = recordingEmbed();
    expect((await index.searchHybrid('slice_bread', embed))[0].name).toBe('mcp__kitchen__slice_bread');
    expect((await index.searchHybrid('slce_bread', embed))[0].name).toBe('mcp__kitchen__slice_bread');
  });

  it('embeds each tool once per function, then only the query; a changed tool is embedded again, a new function embeds anew', async () => {
    const index = indexOf(tools);
    const first = recordingEmbed();
    await index.searchHybrid('tea', first.embed);
    expect(first.texts.sort()).toEqual([...tools.map(toolText), 'tea'].sort());
    first.texts.length = 0;
    await index.searchHybrid('coffee', first.embed);
    await index.searchHybrid('rain', first.embed);
    expect(first.texts).toEqual(['coffee', 'rain']);
    // The kitchen server's list changes: only its changed tool is embedded again.
    first.texts.length = 0;
    const changed = tool('kitchen', 'brew_tea', 'Makes tea or coffee');
    index.update('kitchen', [changed, tools[1]]);
    await index.searchHybrid('drink', first.embed);
    expect(first.texts.sort()).toEqual(['drink', toolText(changed)].sort());
    const second = recordingEmbed();
    await index.searchHybrid('tea', second.embed);
    expect(second.texts).toHaveLength(tools.length + 1);
  });

  it('embeds a tool once when searches run at the same time, and in batches of at most EMBED_BATCH', async () => {
    const many = Array.from({ length: EMBED_BATCH + 10 }, (_, i) => tool('many', `tool_${i}`, `tool number ${i}`));
    const index = indexOf(many);
    const record = recordingEmbed();
    const sizes: number[] = [];
    const embed: EmbedFunction = (texts) => {
      sizes.push(texts.length);
      return record.embed(texts);
    };
    await Promise.all([index.searchHybrid('tea', embed), index.searchHybrid('rain', embed)]);
    expect(record.texts.filter((t) => t.startsWith('tool_'))).toHaveLength(many.length);
    expect(Math.max(...sizes)).toBe(EMBED_BATCH);
  });

  it('honours servers, accept and limit, and answers nothing from an empty index without calling embed', async () => {
    const index = indexOf(tools);
    const { embed } = recordingEmbed();
    const kitchen = await index.searchHybrid('rain', embed, { servers: new Set(['kitchen']), limit: 10 });
    expect(new Set(kitchen.map((t) => t.server))).toEqual(new Set(['kitchen']));
    expect((await index.searchHybrid('tea', embed, { accept: (t) => t.tool.name !== 'brew_tea' })).map((t) => t.tool.name)).not.toContain('brew_tea');
    const empty = recordingEmbed();
    expect(await new ToolSearchIndex().searchHybrid('tea', empty.embed)).toEqual([]);
    expect(empty.calls).toBe(0);
  });

  it('rejects what an embed function must not return, naming it, and asks again after a failure', async () => {
    const index = indexOf(tools);
    const cases: [EmbedFunction, RegExp][] = [
      [async (texts) => texts.slice(1).map(vectorOf), /one vector per text: got \d+ vectors for \d+ texts/],
      [async () => 'nope' as unknown as number[][], /one vector per text: got string/],
      [async (texts) => texts.map(() => [Number.NaN, 1, 0, 0]), /not a finite number/],
      [async (texts) => texts.map(() => null as unknown as number[]), /returned null as vector 0/],
      [async (texts) => texts.map((t) => (t === 'q' ? [1, 0] : vectorOf(t))), /vectors of different lengths \(2 and 4\)/],
    ];
    for (const [embed, message] of cases) await expect(index.searchHybrid('q', embed)).rejects.toMatchObject({ code: 'invalid-arguments', message });
    let fail = true;
    const flaky: EmbedFunction = async (texts) => {
      if (fail) throw new Error('model unavailable');
      return texts.map(vectorOf);
    };
    await expect(index.searchHybrid('tea', flaky)).rejects.toThrow('model unavailable');
    fail = false;
    expect((await index.searchHybrid('tea', flaky))[0].name).toBe('mcp__kitchen__brew_tea');
  });
});
