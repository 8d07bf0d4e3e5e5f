import { compileSchema, issuesText, loadValidator } from '../../../src/protocol/schemas/schema-validator.js';

describe('compileSchema', () => {
  beforeAll(() => loadValidator());

  const schema = {
    type: 'object',
    properties: { path: { type: 'string' }, count: { type: 'integer' }, mode: { enum: ['r', 'w'] } },
    required: ['path'],
    additionalProperties: false,
  };

  it('accepts a value that fits', () => {
    expect(compileSchema(schema)!.check({ path: '/a', count: 2, mode: 'r' })).toEqual([]);
  });

  it('names the missing field, the wrong type and the stray property', () => {
    const issues = compileSchema(schema)!.check({ count: 'x', extra: 1 });
    expect(issuesText(issues)).toContain('`path` is required');
    expect(issuesText(issues)).toContain('`count` must be integer, got string');
    expect(issuesText(issues)).toContain('`extra` is not an accepted property');
  });

  it('gives nested paths with array indexes', () => {
    const nested = { type: 'object', properties: { items: { type: 'array', items: { type: 'object', required: ['id'] } } } };
    expect(compileSchema(nested)!.check({ items: [{ id: 1 }, {}] })).toEqual([{ path: 'items[1].id', message: 'is required' }]);
  });

  it('compiles each schema once, an equal one listed again as a new object too', () => {
    expect(compileSchema(schema)).toBe(compileSchema(schema));
    expect(compileSchema(structuredClone(schema))).toBe(compileSchema(schema));
    // Filling in defaults changes what `check` does: it is compiled apart.
    expect(compileSchema(schema, { useDefaults: true })).not.toBe(compileSchema(schema));
  });

  it('reads 2020-12 by default and draft-07 when the schema says so', () => {
    const tuple2020 = { type: 'array', prefixItems: [{ type: 'string' }], items: false };
    expect(compileSchema(tuple2020)!.check(['a', 'b'])).not.toEqual([]);
    expect(compileSchema(tuple2020)!.check(['a'])).toEqual([]);
    const tuple07 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }], additionalItems: false };
    expect(compileSchema(tuple07)!.check(['a', 'b'])).not.toEqual([]);
    expect(compileSchema(tuple07)!.check(['a'])).toEqual([]);
  });

  it('resolves local $refs and never fetches remote ones', () => {
    const local = { $defs: { id: { type: 'integer' } }, type: 'object', properties: { id: { $ref: '#/$defs/id' } } };
    expect(compileSchema(local)!.check({ id: 'x' })).toHaveLength(1);
    expect(compileSchema({ $ref: 'https://example.invalid/schema.json' })).toBeUndefined();
  });

  it('passes hostile schemas through unchecked instead of overflowing the stack', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { type: 'object', properties: { a: deep } };
    expect(compileSchema(deep)).toBeUndefined();
    expect(compileSchema('not a schema')).toBeUndefined();
  });

  it('fills in defaults when asked', () => {
    const form = { type: 'object', properties: { name: { type: 'string' }, subscribe: { type: 'boolean', default: true } }, required: ['name'] };
    const value: Record<string, unknown> = { name: 'Ada' };
    expect(compileSchema(form, { useDefaults: true })!.check(value)).toEqual([]);
    expect(value).toEqual({ name: 'Ada', subscribe: true });
  });
});
