import fc from 'fast-check';
import { LineSplitter, MAX_STDERR_LINE, StderrTail } from '../../src/transport/stderr-tail.js';

function splitAll(splitter: LineSplitter, chunks: Buffer[]): string[] {
  return [...chunks.flatMap((c) => splitter.push(c)), ...splitter.end()];
}

describe('LineSplitter', () => {
  test('gives back the lines however the bytes are chunked (LF or CRLF, UTF-8 split anywhere)', () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, ''));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 6 }), (lines, crlf, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}${crlf ? '\r\n' : '\n'}`).join(''));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((from, i, all) => bytes.subarray(from, all[i + 1] ?? bytes.length));
        expect(splitAll(new LineSplitter(), chunks)).toEqual(lines);
      }),
    );
  });

  test('flushes a last line without newline at the end', () => {
    expect(splitAll(new LineSplitter(), [Buffer.from('one\ntwo')])).toEqual(['one', 'two']);
    expect(splitAll(new LineSplitter(), [Buffer.from([0xe2, 0x82])])).toEqual(['\uFFFD']);
  });

  test('cuts an endless line and keeps only maxLine characters of it', () => {
    const splitter = new LineSplitter();
    const chunk = Buffer.from('y'.repeat(1000));
    for (let i = 0; i < 100; i++) expect(splitter.push(chunk)).toEqual([]);
    expect(splitter.push(Buffer.from('\nnext\n'))).toEqual([`${'y'.repeat(MAX_STDERR_LINE)}…`, 'next']);
  });

  test('never cuts a surrogate pair in half', () => {
    const [line] = splitAll(new LineSplitter(3), [Buffer.from('ab😀cd\n')]);
    expect(line).toBe('ab…');
  });
});

describe('StderrTail', () => {
  test('keeps the last maxLines lines', () => {
    const tail = new StderrTail(2, 1000);
    for (const line of ['a', 'b', 'c']) tail.push(line);
    expect(tail.lines()).toEqual(['b', 'c']);
  });

  test('keeps at most maxBytes of UTF-8, dropping the oldest lines', () => {
    const tail = new StderrTail(100, 10);
    for (const line of ['ééé', 'abcd', 'xyz']) tail.push(line);
    expect(tail.lines()).toEqual(['abcd', 'xyz']);
  });

  test('cuts one line longer than maxBytes to fit', () => {
    const tail = new StderrTail(10, 8);
    tail.push('old');
    tail.push('ééééé');
    expect(tail.lines()).toEqual(['éé…']);
    expect(Buffer.byteLength(tail.lines().join(''))).toBeLessThanOrEqual(8);
  });

  test('returns a copy', () => {
    const tail = new StderrTail(5, 100);
    tail.push('a');
    tail.lines().push('b');
    expect(tail.lines()).toEqual(['a']);
  });
});
