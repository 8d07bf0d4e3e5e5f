import type { CallToolResult, ContentBlock, McpError, ReadResourceResult, ServerMetrics, ServerStatus, UnknownContentBlock } from '../index.js';

/** Narrowest last column worth wrapping into; below it lines are cut instead. */
const MIN_WRAP_WIDTH = 16;

/**
 * Rows as columns padded to their widest cell. With `maxWidth` (a terminal's width) the
 * last column wraps at word boundaries under itself; when the other columns leave it too
 * little room, lines are cut with `…` instead. `headerStyle` dresses the header line
 * (bold on a terminal) after the layout, so escape codes never count as width.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[], maxWidth?: number, headerStyle: (text: string) => string = (t) => t): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const indent = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  const room = maxWidth === undefined ? Infinity : maxWidth - indent;
  return all
    .map((row, r) => {
      const lead = row.slice(0, -1).map((cell, i) => cell.padEnd(widths[i])).join('  ');
      const last = row[row.length - 1] ?? '';
      const join = (tail: string) => (row.length > 1 ? `${lead}  ${tail}` : tail).trimEnd();
      let lines: string[];
      if (maxWidth === undefined || indent + last.length <= maxWidth) lines = [join(last)];
      else if (room >= MIN_WRAP_WIDTH) lines = wrap(last, room).map((part, i) => (i === 0 ? join(part) : `${' '.repeat(indent)}${part}`.trimEnd()));
      else {
        const line = join(last);
        lines = [line.length > maxWidth ? `${line.slice(0, Math.max(maxWidth - 1, 0))}…` : line];
      }
      const text = lines.join('\n');
      return r === 0 ? headerStyle(text) : text;
    })
    .join('\n');
}

/** Text in lines of at most `width`, broken at spaces; a word longer than a line is split. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(/\s+/).filter((w) => w !== '')) {
    while (word.length > width) {
      if (line !== '') lines.push(line);
      lines.push(word.slice(0, width));
      word = word.slice(width);
      line = '';
    }
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/** Width of a listing when stdout is not a terminal: the classic terminal. */
export const DEFAULT_WIDTH = 80;
/** Widest name column of a one-line listing; a longer name pushes its own line's text right. */
const MAX_NAME_COLUMN = 36;
/** Least room worth giving a summary after a name: less, and the line is the name alone. */
const MIN_SUMMARY = 12;

/**
 * One line per item, none wider than `width`: the name, then the first sentence of its
 * text, cut at a word with `…` when it does not fit. Names are never cut: they are what
 * the reader types next.
 */
export function summaryLines(rows: readonly (readonly [name: string, text: string | undefined])[], width = DEFAULT_WIDTH): string {
  const column = Math.min(MAX_NAME_COLUMN, Math.floor(width * 0.45), Math.max(0, ...rows.map(([name]) => name.length)));
  return rows
    .map(([name, text]) => {
      const lead = name.padEnd(column);
      const room = width - lead.length - 2;
      const summary = firstSentence(text);
      return summary === '' || room < MIN_SUMMARY ? name : `${lead}  ${fitTo(summary, room)}`;
    })
    .join('\n');
}

/** A text's first sentence (to the first `.`, `!` or `?` before a space, or its first line), on one line. */
export function firstSentence(text: string | undefined): string {
  const line = firstLine(text);
  for (const end of line.matchAll(/[.!?](?=\s)/g)) {
    // "e.g. 2d6" and "v. 2" go on: an abbreviation or a lone letter ends no sentence.
    if (end[0] === '.' && /(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no)|\b[a-z])$/i.test(line.slice(0, end.index))) continue;
    return oneLine(line.slice(0, end.index + 1));
  }
  return oneLine(line);
}

/** `text` if it fits in `width`, else cut at the last space that leaves room for `…`. */
function fitTo(text: string, width: number): string {
  if (text.length <= width) return text;
  const cut = text.slice(0, width - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > width / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:(-]+$/, '')}…`;
}

/** The first non-empty line of a text, trimmed ('' for none). */
export function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n').find((line) => line.trim() !== '')?.trim() ?? '';
}

/** Whitespace runs (newlines included) as single spaces: one line for an error message. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `512 B`, `1.2 KiB`, `3.4 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Size of base64 data once decoded. */
function decodedSize(base64: string): string {
  return formatBytes(Buffer.byteLength(base64, 'base64'));
}

/** One content block for a terminal: text as text, binary data summarised by type and size. */
export function describeContent(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${decodedSize(block.data)}]`;
    case 'resource_link':
      return `[resource link ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]`;
    case 'resource': {
      const { resource } = block;
      const mime = resource.mimeType ? ` ${resource.mimeType}` : '';
      if (typeof resource.text === 'string') return `[resource ${resource.uri}${mime}]\n${resource.text}`;
      return `[resource ${resource.uri}${mime}${typeof resource.blob === 'string' ? `, ${decodedSize(resource.blob)}` : ''}]`;
    }
    default:
      // A block of a newer revision: the type knows only the standard ones.
      return `[${(block as UnknownContentBlock).type} content]`;
  }
}

/** A tool result as text; a result with only structured content shows that as JSON. */
export function formatCallResult(result: CallToolResult): string {
  if (result.content.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent, null, 2);
  return result.content.map(describeContent).join('\n');
}

/** What a failing tool said (`isError`), in one line. */
export function toolErrorText(result: CallToolResult): string {
  const text = oneLine(result.content.map(describeContent).join(' '));
  return text || 'the tool reported an error without a message';
}

/** A resource's contents: text as text, blobs summarised; several items get `==> uri <==` headers. */
export function formatReadResult(result: ReadResourceResult): string {
  const many = result.contents.length > 1;
  return result.contents
    .map((item) => {
      const body =
        'text' in item && typeof item.text === 'string'
          ? item.text
          : `[blob${item.mimeType ? ` ${item.mimeType}` : ''}, ${decodedSize(String((item as { blob: string }).blob))}]`;
      return many ? `==> ${item.uri} <==\n${body}` : body;
    })
    .join('\n');
}

/** An error as JSON: its message is not an enumerable property, so it is spelled out. */
function errorJson(error: McpError): { code: string; message: string; phase?: string } {
  return { code: error.code, message: error.message, ...(error.phase === undefined ? {} : { phase: error.phase }) };
}

/** `status --json`: each server's status with its last error spelled out, and its figures when `metrics` are given. */
export function statusJson(status: Readonly<Record<string, ServerStatus>>, metrics?: Readonly<Record<string, ServerMetrics>>): Record<string, object> {
  return Object.fromEntries(
    Object.entries(status).map(([server, { lastError, ...rest }]) => [
      server,
      { ...rest, ...(lastError ? { lastError: errorJson(lastError) } : {}), ...(metrics ? { metrics: metrics[server] } : {}) },
    ]),
  );
}
