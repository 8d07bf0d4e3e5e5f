import type { CallToolResult, EmbeddedResource } from '../protocol/types.js';

/** Where the whole result was saved, or why it could not be. */
export type SavedResult = { path: string } | { error: string };

/**
 * The UTF-8 bytes of a result's text: text blocks and the text of embedded resources.
 * Images, audio and binary resources are not text and never count.
 */
export function textBytes(result: CallToolResult): number {
  let total = 0;
  for (const piece of textPieces(result)) total += Buffer.byteLength(piece.text);
  return total;
}

/** Whether a result is over the cap: its text, or its `structuredContent` as JSON, exceeds `maxBytes`. */
export function isOverLimit(result: CallToolResult, maxBytes: number): boolean {
  return textBytes(result) > maxBytes || structuredBytes(result) > maxBytes;
}

/**
 * A copy of `result` whose text fits `maxBytes`, for a model's context:
 * - each text (a text block, an embedded resource's text) too long for its share keeps
 *   its head and its tail, with a marker between them saying how many bytes were cut and
 *   where the whole result was saved; short texts keep their full length, the long ones
 *   share what is left (so one huge block does not erase the small ones beside it);
 * - images, audio, blobs and resource links are never cut or dropped;
 * - `structuredContent` is kept when its JSON fits the cap; a larger one cannot be cut
 *   without breaking the tool's `outputSchema`, so it is left out and a text block says so
 *   and where it was saved;
 * - `isError` and `_meta` are kept.
 * Markers count against the cap; with a very small cap the markers alone may exceed it.
 * A result within the cap is returned as is.
 */
export function cutResult(result: CallToolResult, maxBytes: number, saved: SavedResult): CallToolResult {
  if (!isOverLimit(result, maxBytes)) return result;
  const where = 'path' in saved ? `the whole result is in ${saved.path}` : `the whole result could not be saved (${saved.error})`;
  const pieces = textPieces(result);
  const sizes = pieces.map((p) => Buffer.byteLength(p.text));
  const shares = sizes.reduce((a, b) => a + b, 0) > maxBytes ? fairShares(sizes, maxBytes) : sizes;
  const texts = new Map<number, string>();
  pieces.forEach((piece, i) => {
    if (shares[i] < sizes[i]) texts.set(i, headAndTail(piece.text, sizes[i], shares[i], where));
  });
  let at = 0;
  const content = result.content.map((block) => {
    const mine = textPieces({ content: [block] }).length > 0 ? at++ : -1;
    const text = texts.get(mine);
    if (text === undefined) return block;
    if (block.type === 'text') return { ...block, text };
    const resource = (block as EmbeddedResource).resource;
    return { ...block, resource: { ...resource, text } } as EmbeddedResource;
  });
  const out: CallToolResult = { ...result, content };
  if (structuredBytes(result) > maxBytes) {
    delete out.structuredContent;
    content.push({ type: 'text', text: `[lazy-mcp: structuredContent of ${structuredBytes(result)} bytes left out, over the ${maxBytes}-byte limit; ${where}]` });
  }
  return out;
}

function textPieces(result: Pick<CallToolResult, 'content'>): { text: string }[] {
  const pieces: { text: string }[] = [];
  for (const block of result.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') pieces.push(block as { text: string });
    else if (block.type === 'resource') {
      const resource = (block as { resource?: { text?: unknown } }).resource;
      if (typeof resource?.text === 'string') pieces.push(resource as { text: string });
    }
  }
  return pieces;
}

function structuredBytes(result: CallToolResult): number {
  return result.structuredContent === undefined ? 0 : Buffer.byteLength(JSON.stringify(result.structuredContent));
}

/** Water-filling: texts smaller than an equal share keep all of it, the rest split what is left. */
function fairShares(sizes: number[], budget: number): number[] {
  const shares = new Array<number>(sizes.length);
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[a] - sizes[b]);
  let left = budget;
  order.forEach((i, k) => {
    const share = Math.floor(left / (order.length - k));
    shares[i] = Math.min(sizes[i], share);
    left -= shares[i];
  });
  return shares;
}

/** The text's first and last bytes around a marker, `share` bytes in all when it fits; cut on character boundaries. */
function headAndTail(text: string, size: number, share: number, where: string): string {
  const bytes = Buffer.from(text);
  const marker = (cut: number) => `\n\n[… lazy-mcp cut ${cut} of ${size} bytes here; ${where} …]\n\n`;
  const keep = Math.max(0, share - Buffer.byteLength(marker(size)));
  let head = Math.ceil(keep / 2);
  let tail = size - Math.floor(keep / 2);
  // Never split a UTF-8 sequence: a continuation byte (10xxxxxx) cannot start a piece.
  while (head > 0 && (bytes[head] & 0xc0) === 0x80) head--;
  while (tail < size && (bytes[tail] & 0xc0) === 0x80) tail++;
  return `${bytes.subarray(0, head).toString()}${marker(tail - head)}${bytes.subarray(tail).toString()}`;
}
