import { StringDecoder } from 'node:string_decoder';

/** Longest stderr line kept or emitted, in UTF-16 code units; a longer one is cut and ends with `…`. */
export const MAX_STDERR_LINE = 4096;

/**
 * Splits a byte stream into text lines: LF or CRLF endings, chunks split anywhere,
 * even inside a UTF-8 character. Memory stays bounded however long a line runs: past
 * `maxLine` the rest of that line is dropped.
 */
export class LineSplitter {
  readonly #decoder = new StringDecoder('utf8');
  #partial = '';
  #cut = false;

  constructor(readonly maxLine = MAX_STDERR_LINE) {}

  /** The lines this chunk completes. */
  push(chunk: Buffer): string[] {
    return this.#split(this.#decoder.write(chunk));
  }

  /** The last line when the stream ended without a newline. */
  end(): string[] {
    const lines = this.#split(this.#decoder.end());
    if (this.#partial !== '' || this.#cut) lines.push(this.#take());
    return lines;
  }

  #split(text: string): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      this.#append(text.slice(start, nl));
      lines.push(this.#take());
      start = nl + 1;
    }
    this.#append(text.slice(start));
    return lines;
  }

  #append(text: string): void {
    if (this.#cut) return;
    const room = this.maxLine - this.#partial.length;
    if (text.length <= room) {
      this.#partial += text;
      return;
    }
    let end = room;
    // Never keep half of a surrogate pair.
    if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    this.#partial += text.slice(0, end);
    this.#cut = true;
  }

  #take(): string {
    let line = this.#partial.endsWith('\r') ? this.#partial.slice(0, -1) : this.#partial;
    if (this.#cut) line += '…';
    this.#partial = '';
    this.#cut = false;
    return line;
  }
}

/** The last stderr lines of a server, bounded both in lines and in UTF-8 bytes. */
export class StderrTail {
  readonly #lines: { text: string; bytes: number }[] = [];
  #bytes = 0;

  /**
   * @param maxLines lines kept at most.
   * @param maxBytes UTF-8 bytes kept at most; one longer line is cut to fit.
   */
  constructor(
    readonly maxLines: number,
    readonly maxBytes: number,
  ) {}

  push(line: string): void {
    if (this.maxLines === 0 || this.maxBytes === 0) return;
    const text = cutToBytes(line, this.maxBytes);
    const bytes = Buffer.byteLength(text);
    this.#lines.push({ text, bytes });
    this.#bytes += bytes;
    while (this.#lines.length > this.maxLines || this.#bytes > this.maxBytes) {
      this.#bytes -= this.#lines.shift()!.bytes;
    }
  }

  /** A copy of the kept lines, oldest first. */
  lines(): string[] {
    return this.#lines.map((l) => l.text);
  }
}

function cutToBytes(line: string, maxBytes: number): string {
  if (Buffer.byteLength(line) <= maxBytes) return line;
  const ellipsis = '…';
  const room = Math.max(0, maxBytes - Buffer.byteLength(ellipsis));
  // A character split by the byte cut decodes to U+FFFD; drop it.
  const head = Buffer.from(line).subarray(0, room).toString('utf8').replace(/\uFFFD$/, '');
  return room === 0 ? '' : head + ellipsis;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Lines that say what went wrong, as crash reports put them: a JavaScript or Python
 * exception line (`Error: …`, `TypeError: …`, `Error [ERR_X]: …`, `ValueError: …`,
 * `java.lang.IllegalStateException: …`), a Go `panic:` or `fatal error:`, a Rust
 * `panicked at`, an `error:` of a CLI, npm's `npm error …`. A Python exception group's
 * `| ` / `+ ` margin is ignored. Warnings are not explanations.
 */
const EXPLAINING = [
  /^(?:[\w$]+\.)*(?:[A-Z][\w$]*)?(?:Error|Exception|ExceptionGroup|Exit|Interrupt|Fault|Panic)(?: \[[\w-]+\])?(?::\s|$)/,
  /^(?:panic|fatal error|error|fatal|FATAL|ERROR|Fatal error|Uncaught)(?:\[\w+\])?:\s/,
  /^Exception in thread /,
  /^thread '.*' panicked at /,
  /^npm (?:ERR!|error) (?:code|\d{3}|[A-Z]\w+)\b/,
  /^Segmentation fault|^Aborted|^Killed$/,
];
/** Lines that explain nothing: a stack frame, a lone brace of an error's properties, Node's version footer. */
const NOISE = [/^[\s|+]*at /, /^[\s|+]*File "/, /^[\s{}[\]()^,;|+-]*$/, /^Node\.js v\d/, /^goroutine \d+ \[/, /^exit status \d+$/];

/** The longest a quoted line may be, in characters. */
const MAX_QUOTED_LINE = 200;

/**
 * What of a stderr tail to quote in an error message, oldest first: the lines that
 * explain the failure (the first and the last such line) and the last `lastLines`
 * lines that say anything, without repeats. `undefined` marks a gap between the two.
 */
export function explainingLines(tail: readonly string[], lastLines = 3): (string | undefined)[] {
  const explaining: number[] = [];
  const unmargined = tail.map((line) => line.replace(/^[\s|+]*(?=\S)/, ''));
  for (let i = 0; i < tail.length; i++) {
    const line = unmargined[i]!;
    if (EXPLAINING.some((pattern) => pattern.test(line)) && !/^\w*Warning\b/.test(line)) explaining.push(i);
  }
  const chosen = new Set<number>();
  if (explaining.length > 0) {
    chosen.add(explaining[0]!);
    chosen.add(explaining[explaining.length - 1]!);
    // Rust prints the message on the line after `panicked at …:`.
    for (const i of [...chosen]) if (/panicked at .*:$/.test(tail[i]!) && i + 1 < tail.length) chosen.add(i + 1);
  }
  let wanted = lastLines;
  for (let i = tail.length - 1; i >= 0 && wanted > 0; i--) {
    if (NOISE.some((pattern) => pattern.test(tail[i]!))) continue;
    chosen.add(i);
    wanted -= 1;
  }
  // A tail of nothing but noise still says something.
  if (chosen.size === 0) for (let i = Math.max(0, tail.length - lastLines); i < tail.length; i++) chosen.add(i);
  const picked = [...chosen].sort((a, b) => a - b);
  const out: (string | undefined)[] = [];
  picked.forEach((index, k) => {
    if (k > 0 && index !== picked[k - 1]! + 1) out.push(undefined);
    const line = unmargined[index]!.trim();
    out.push(line.length > MAX_QUOTED_LINE ? `${line.slice(0, MAX_QUOTED_LINE)}…` : line);
  });
  return out;
}
