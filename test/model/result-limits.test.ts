import { cutResult, isOverLimit, textBytes } from '../../src/model/result-limits.js';
import type { CallToolResult } from '../../src/protocol/types.js';

const saved = { path: '/state/results/r.txt' };
const image = { type: 'image', data: 'iVBORw0KGgo'.repeat(1000), mimeType: 'image/png' } as const;
const audio = { type: 'audio', data: 'UklGRg'.repeat(1000), mimeType: 'audio/wav' } as const;

describe('cutResult', () => {
  it('returns a result within the cap as is', () => {
    const result: CallToolResult = { content: [{ type: 'text', text: 'hello' }, image] };
    expect(cutResult(result, 5, saved)).toBe(result);
    expect(textBytes(result)).toBe(5); // images do not count
  });

  it('keeps head and tail of a long text around a marker naming the file and the bytes cut', () => {
    const text = `HEAD${'x'.repeat(100_000)}TAIL`;
    const out = cutResult({ content: [{ type: 'text', text }] }, 1000, saved);
    const cut = (out.content[0] as { text: string }).text;
    expect(cut.startsWith('HEADxxx')).toBe(true);
    expect(cut.endsWith('xxxTAIL')).toBe(true);
    const [, cutBytes, of] = /lazy-mcp cut (\d+) of (\d+) bytes here; the whole result is in \/state\/results\/r\.txt/.exec(cut)!.map(Number);
    expect(of).toBe(100_008);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(1000);
    // What is kept plus what was cut is the whole text.
    expect(Buffer.byteLength(cut.replace(/\n\n\[… lazy-mcp cut .*? …\]\n\n/, ''))).toBe(of - cutBytes);
  });

  it('never cuts images or audio, and short texts beside a long one keep their full length', () => {
    const result: CallToolResult = { content: [{ type: 'text', text: 'y'.repeat(50_000) }, image, audio, { type: 'text', text: 'a short note' }], isError: true };
    const out = cutResult(result, 2000, saved);
    expect(out.content[1]).toBe(image);
    expect(out.content[2]).toBe(audio);
    expect(out.content[3]).toEqual({ type: 'text', text: 'a short note' });
    expect(out.isError).toBe(true);
    expect(textBytes(out)).toBeLessThanOrEqual(2000);
    expect(result.content[0]).toEqual({ type: 'text', text: 'y'.repeat(50_000) }); // the input is not changed
  });

  it('cuts on UTF-8 character boundaries', () => {
    const out = cutResult({ content: [{ type: 'text', text: 'é🙂'.repeat(10_000) }] }, 777, saved);
    const cut = (out.content[0] as { text: string }).text;
    expect(cut).not.toContain('\uFFFD');
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(777);
  });

  it('cuts the text of embedded resources and leaves blobs and links alone', () => {
    const result: CallToolResult = {
      content: [
        { type: 'resource', resource: { uri: 'file:///big.log', mimeType: 'text/plain', text: 'L'.repeat(10_000) } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA'.repeat(5000) } },
        { type: 'resource_link', uri: 'file:///x', name: 'x' },
      ],
    };
    const out = cutResult(result, 500, saved);
    const first = out.content[0] as unknown as { resource: { uri: string; text: string } };
    expect(first.resource.uri).toBe('file:///big.log');
    expect(first.resource.text).toContain('lazy-mcp cut');
    expect(out.content[1]).toBe(result.content[1]);
    expect(out.content[2]).toBe(result.content[2]);
  });

  it('leaves out structuredContent too large for the cap, saying so, and keeps a small one', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ i }));
    const big: CallToolResult = { content: [{ type: 'text', text: 'summary' }], structuredContent: { rows } };
    expect(isOverLimit(big, 1000)).toBe(true);
    const out = cutResult(big, 1000, saved);
    expect(out.structuredContent).toBeUndefined();
    expect(out.content[0]).toEqual({ type: 'text', text: 'summary' });
    expect((out.content[1] as { text: string }).text).toMatch(/structuredContent of \d+ bytes left out, over the 1000-byte limit; the whole result is in \/state/);
    const small: CallToolResult = { content: [{ type: 'text', text: 'z'.repeat(5000) }], structuredContent: { ok: true } };
    expect(cutResult(small, 1000, saved).structuredContent).toEqual({ ok: true });
  });

  it('says when the whole result could not be saved', () => {
    const out = cutResult({ content: [{ type: 'text', text: 'q'.repeat(5000) }] }, 400, { error: 'EACCES: permission denied' });
    expect((out.content[0] as { text: string }).text).toContain('the whole result could not be saved (EACCES: permission denied)');
  });
});
