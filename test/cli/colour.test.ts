import { coloursFor, wantsColour } from '../../src/cli/colour.js';
import { table, wrap } from '../../src/cli/format.js';

describe('colour', () => {
  it('is on for a terminal only, off with NO_COLOR or TERM=dumb, and FORCE_COLOR decides over both', () => {
    const tty = { isTTY: true };
    const pipe = { isTTY: false };
    expect([wantsColour(tty, {}), wantsColour(pipe, {})]).toEqual([true, false]);
    expect([wantsColour(tty, { NO_COLOR: '1' }), wantsColour(tty, { NO_COLOR: '' }), wantsColour(tty, { TERM: 'dumb' })]).toEqual([false, true, false]);
    expect([wantsColour(pipe, { FORCE_COLOR: '1' }), wantsColour(tty, { FORCE_COLOR: '0' }), wantsColour(pipe, { FORCE_COLOR: '1', NO_COLOR: '1' })]).toEqual([true, false, true]);
    expect(coloursFor(tty, {}).red('x')).toBe('\u001b[31mx\u001b[39m');
    expect(coloursFor(pipe, {}).red('x')).toBe('x');
  });
});

describe('table wrapping', () => {
  it('wraps the last column at word boundaries under itself', () => {
    const rows = [['mcp__a__read', 'a', 'Read a file from the disk and return its text']];
    expect(table(['TOOL', 'SERVER', 'DESCRIPTION'], rows, 40)).toBe(
      ['TOOL          SERVER  DESCRIPTION', 'mcp__a__read  a       Read a file from', '                      the disk and', '                      return its text'].join('\n'),
    );
    // Fits: unchanged; no width: unchanged.
    expect(table(['A', 'B'], [['x', 'short']], 40)).toBe('A  B\nx  short');
    expect(table(['A', 'B'], [['x', 'a b c d e f g h i j k l m n o p']])).toBe('A  B\nx  a b c d e f g h i j k l m n o p');
  });

  it('styles the header after the layout, so codes never count as width', () => {
    expect(table(['A', 'B'], [['x', 'y']], 40, (t) => `<${t}>`)).toBe('<A  B>\nx  y');
  });

  it('splits a word longer than a line, and keeps empty text one line', () => {
    expect(wrap('abcdefghij klm', 4)).toEqual(['abcd', 'efgh', 'ij', 'klm']);
    expect(wrap('', 5)).toEqual(['']);
  });
});
