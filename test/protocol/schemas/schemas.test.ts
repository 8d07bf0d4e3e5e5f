import fc from 'fast-check';
import { CallToolResultSchema, isPlainCallToolResult } from '../../../src/protocol/schemas/schemas.js';

describe('isPlainCallToolResult', () => {
  it('takes the usual text result, and leaves what it cannot vouch for to the schema', () => {
    expect(isPlainCallToolResult({ content: [{ type: 'text', text: 'hi' }] })).toBe(true);
    expect(isPlainCallToolResult({ content: [], structuredContent: { a: 1 }, isError: false, _meta: {} })).toBe(true);
    for (const other of [
      null,
      [],
      {},
      { content: [{ type: 'image', data: '', mimeType: 'image/png' }] },
      { content: [{ type: 'text' }] },
      { content: [{ type: 'text', text: 'x' }], isError: 'yes' },
      { content: [{ type: 'text', text: 'x' }], structuredContent: [1] },
      { content: [{ type: 'text', text: 'x' }], _meta: 'm' },
    ]) {
      expect(isPlainCallToolResult(other)).toBe(false);
    }
  });

  it('never takes a value the schema would refuse or change', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const block = fc.oneof(
      fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.integer()) }),
      fc.record({ type: fc.constantFrom('text', 'image', 'other'), text: fc.option(fc.string()) }),
      json,
    );
    const textBlock = fc.record({ type: fc.constant('text'), text: fc.string() }, { requiredKeys: ['type', 'text'] });
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(fc.constant(undefined), arb, json);
    const result = fc.record(
      {
        content: fc.oneof({ weight: 4, arbitrary: fc.array(textBlock, { maxLength: 4 }) }, fc.array(block, { maxLength: 4 }), json),
        structuredContent: maybe(fc.dictionary(fc.string(), json)),
        isError: maybe(fc.boolean()),
        _meta: maybe(fc.dictionary(fc.string(), json)),
        extra: json,
      },
      { requiredKeys: [] },
    );
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: result }, json), (value) => {
        if (!isPlainCallToolResult(value)) return;
        // zod copies a record by assignment, which turns an own `__proto__` key into the
        // copy's prototype; the check keeps the key JSON.parse made, pinned separately below.
        if (JSON.stringify(value).includes('"__proto__"')) return;
        taken++;
        const parsed = CallToolResultSchema.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(value);
      }),
      { numRuns: 2000 },
    );
    // The property is about values the check takes: enough of them must come up.
    expect(taken).toBeGreaterThan(100);
  });

  it('keeps an own __proto__ key as the data the server sent, never as a prototype', () => {
    const value = JSON.parse('{"content":[],"structuredContent":{"__proto__":{"polluted":1}}}');
    expect(isPlainCallToolResult(value)).toBe(true);
    expect(Object.getPrototypeOf(value.structuredContent)).toBe(Object.prototype);
    expect(Object.keys(value.structuredContent)).toEqual(['__proto__']);
    expect(value.structuredContent.polluted).toBeUndefined();
  });
});
