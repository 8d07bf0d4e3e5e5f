import { describeContent, firstLine, firstSentence, formatBytes, summaryLines, formatCallResult, formatReadResult, oneLine, table, toolErrorText } from '../../src/cli/format.js';
import type { ContentBlock, UnknownContentBlock } from '../../src/index.js';

const base64Of = (bytes: number) => Buffer.alloc(bytes).toString('base64');

describe('table', () => {
  it('pads every column but the last, and cuts lines to a width with …', () => {
    expect(table(['A', 'BB', 'C'], [['long-cell', 'x', 'tail'], ['y', '', '']])).toBe('A          BB  C\nlong-cell  x   tail\ny');
    expect(table(['NAME', 'TEXT'], [['a', 'abcdefghij']], 8)).toBe('NAME  T…\na     a…');
  });
});

describe('summaryLines', () => {
  it('gives one line per name within the width: the first sentence, cut at a word with …', () => {
    const rows: [string, string | undefined][] = [
      ['mcp__a__read', 'Read a file from the disk and return its text. Fails on binary files.'],
      ['mcp__a__x', undefined],
      ['mcp__a_very_long_name_that_takes_the_line', 'Does a thing'],
    ];
    // A name too long for the column keeps its line to itself rather than be cut.
    expect(summaryLines(rows, 40).split('\n')).toEqual(['mcp__a__read        Read a file from…', 'mcp__a__x', 'mcp__a_very_long_name_that_takes_the_line']);
    expect(summaryLines(rows, 80).split('\n')[0]).toBe('mcp__a__read                          Read a file from the disk and return its…');
    expect(summaryLines(rows.slice(0, 1), 80)).toBe('mcp__a__read  Read a file from the disk and return its text.');
    expect(summaryLines([['n', 'Toggles simulated, random-leveled logging on or off.']], 30)).toBe('n  Toggles simulated…');
  });

  it('ends a sentence at . ! or ? before a space, not at an abbreviation', () => {
    expect(firstSentence('Roll dice in NdS+M notation, e.g. "2d6". Then add.')).toBe('Roll dice in NdS+M notation, e.g. "2d6".');
    expect(firstSentence('Is it? Yes.')).toBe('Is it?');
    expect(firstSentence('\nVersion 1.2 of the reader\nsecond line')).toBe('Version 1.2 of the reader');
    expect(firstSentence(undefined)).toBe('');
  });
});

describe('text helpers', () => {
  it('takes the first non-empty line, and folds whitespace into one line', () => {
    expect(firstLine('\n  First.\nSecond.')).toBe('First.');
    expect(firstLine(undefined)).toBe('');
    expect(oneLine(' a\n  b\tc ')).toBe('a b c');
  });

  it('formats sizes in binary units', () => {
    expect([formatBytes(0), formatBytes(1023), formatBytes(1536), formatBytes(5 * 1024 * 1024)]).toEqual(['0 B', '1023 B', '1.5 KiB', '5.0 MiB']);
  });
});

describe('content', () => {
  it('shows text as text and summarises binary content by type and size', () => {
    const blocks: ContentBlock[] = [
      { type: 'text', text: 'hello' },
      { type: 'image', mimeType: 'image/png', data: base64Of(2048) },
      { type: 'audio', mimeType: 'audio/wav', data: base64Of(10) },
      { type: 'resource_link', uri: 'file:///a.txt', name: 'a', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'mem://t', mimeType: 'text/plain', text: 'inside' } },
      { type: 'resource', resource: { uri: 'mem://b', blob: base64Of(3) } },
      { type: 'hologram' } as UnknownContentBlock as unknown as ContentBlock,
    ];
    expect(blocks.map(describeContent)).toEqual([
      'hello',
      '[image image/png, 2.0 KiB]',
      '[audio audio/wav, 10 B]',
      '[resource link file:///a.txt (text/plain)]',
      '[resource mem://t text/plain]\ninside',
      '[resource mem://b, 3 B]',
      '[hologram content]',
    ]);
  });

  it('shows structured content when a result has nothing else', () => {
    expect(formatCallResult({ content: [], structuredContent: { sum: 3 } })).toBe('{\n  "sum": 3\n}');
    expect(formatCallResult({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
  });

  it('puts a failing tool\'s message on one line', () => {
    expect(toolErrorText({ content: [{ type: 'text', text: 'bad\ninput' }], isError: true })).toBe('bad input');
    expect(toolErrorText({ content: [], isError: true })).toBe('the tool reported an error without a message');
  });

  it('shows resource contents, with headers when there are several', () => {
    expect(formatReadResult({ contents: [{ uri: 'mem://a', text: 'A' }] })).toBe('A');
    expect(formatReadResult({ contents: [{ uri: 'mem://a', text: 'A' }, { uri: 'mem://b', mimeType: 'image/png', blob: base64Of(4) }] })).toBe(
      '==> mem://a <==\nA\n==> mem://b <==\n[blob image/png, 4 B]',
    );
  });
});
