import fc from 'fast-check';
import { stderrHint } from '../../../src/errors.js';
import { ServerProcess } from '../../../src/transport/stdio/server-process.js';
import { LineSplitter, MAX_STDERR_LINE, StderrTail } from '../../../src/transport/stdio/stderr-tail.js';
import { nodeSpec } from '../process-probes.js';

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

/** A crash report as a server's stderr tail holds it: blank lines dropped. */
const tailOf = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

const NODE_CRASH = tailOf(`
node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/srv/mcp/dist/index.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:174:12)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.11.0
`);

const GO_PANIC = tailOf(`
2026/12/03 09:12:44 starting mcp server on stdio
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6a1f2e]

goroutine 1 [running]:
main.(*Server).loadTools(0x0)
	/src/server.go:88 +0x2e
main.main()
	/src/main.go:21 +0x105
`);

const PYTHON_GROUP = tailOf(`
  + Exception Group Traceback (most recent call last):
  |   File "/app/.venv/lib/python3.12/site-packages/anyio/_backends/_asyncio.py", line 767, in __aexit__
  |     raise BaseExceptionGroup(
  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/app/server.py", line 41, in main
    |     limit = int(os.environ["LIMIT"])
    |             ^^^^^^^^^^^^^^^^^^^^^^^^
    | ValueError: invalid literal for int() with base 10: 'ten'
    +------------------------------------
`);

describe('stderrHint', () => {
  test('a Node crash: quotes the Error line, not only the braces and the version footer', () => {
    const hint = stderrHint(NODE_CRASH);
    expect(hint).toContain("Error: Cannot find module '/srv/mcp/dist/index.js'");
    expect(hint).toContain("code: 'MODULE_NOT_FOUND'");
    expect(hint).not.toContain('Node.js v20');
    expect(hint).not.toContain('at Module._load');
  });

  test('a Go panic: quotes the panic line and the last lines that say something', () => {
    const hint = stderrHint(GO_PANIC);
    expect(hint).toContain('panic: runtime error: invalid memory address or nil pointer dereference');
    expect(hint).toContain('main.main()');
  });

  test("a Python exception group: quotes the group and the traceback's last line", () => {
    const hint = stderrHint(PYTHON_GROUP);
    expect(hint).toContain('ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)');
    expect(hint).toContain("ValueError: invalid literal for int() with base 10: 'ten'");
  });

  test('a plain Python traceback and a Go fatal error', () => {
    const python = tailOf(`Traceback (most recent call last):
  File "/app/server.py", line 3, in <module>
    import mcp
ModuleNotFoundError: No module named 'mcp'`);
    expect(stderrHint(python)).toContain("ModuleNotFoundError: No module named 'mcp'");
    const go = tailOf(`fatal error: all goroutines are asleep - deadlock!

goroutine 1 [chan receive]:
main.main()
	/src/main.go:9 +0x2d
exit status 2`);
    expect(stderrHint(go)).toMatch(/^ \(last stderr: fatal error: all goroutines are asleep - deadlock! \| /);
  });

  test('an ordinary tail is quoted as before: its last three lines, in order', () => {
    expect(stderrHint(['one', 'two', 'three', 'four'])).toBe(' (last stderr: two | three | four)');
    expect(stderrHint([])).toBe('');
    expect(stderrHint(undefined)).toBe('');
    expect(stderrHint(['}', 'Node.js v20.11.0'])).toBe(' (last stderr: } | Node.js v20.11.0)');
  });

  test('a gap between the explanation and the tail is marked, and the hint stays bounded', () => {
    const tail = ['Error: first', ...Array.from({ length: 20 }, (_, i) => `    at f${i} (x.js:${i}:1)`), 'exiting', 'bye'];
    expect(stderrHint(tail)).toBe(' (last stderr: Error: first | … | exiting | bye)');
    const long = ['TypeError: ' + 'x'.repeat(5000), 'y'.repeat(5000), 'z'.repeat(5000)];
    const hint = stderrHint(long);
    expect(hint.length).toBeLessThanOrEqual(520);
    expect(hint).toContain('TypeError: xxx');
  });

  test('a real crashing Node server: the hint names the TypeError', async () => {
    const server = await ServerProcess.spawn(nodeSpec('crashes-with-stack.mjs'));
    try {
      await expect(server.exited).resolves.toEqual({ exitCode: 1 });
      const tail = server.stderrTail();
      expect(tail[tail.length - 1]).toMatch(/^Node\.js v/);
      const hint = stderrHint(tail);
      expect(hint).toContain('TypeError: config.port must be a number, got "eighty"');
      expect(hint).toContain("code: 'ERR_BAD_CONFIG'");
    } finally {
      await server.close();
    }
  });
});
