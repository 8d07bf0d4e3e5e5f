import { describe, expect, test } from '@jest/globals';
import { copyWith } from '../../src/util/copy-with.js';

describe('copyWith', () => {
  test('gives the object a spread would: same keys in the same order, the key replaced in place or added last', () => {
    const symbol = Symbol('s');
    const source = { a: 1, _meta: { x: 1 }, b: 2, [symbol]: 3 };
    const copy = copyWith(source, '_meta', { y: 2 });
    expect(copy).toEqual({ ...source, _meta: { y: 2 } });
    expect(Object.keys(copy)).toEqual(['a', '_meta', 'b']);
    expect((copy as Record<symbol, unknown>)[symbol]).toBe(3);
    expect(Object.keys(copyWith({ a: 1 }, 'signal', 0))).toEqual(['a', 'signal']);
    expect(source._meta).toEqual({ x: 1 });
  });

  test('copies nothing from undefined, null or a number, as spread does', () => {
    expect(copyWith(undefined, 'progressToken', 7)).toEqual({ progressToken: 7 });
    expect(copyWith(null as unknown as object, 'k', 1)).toEqual({ k: 1 });
    expect(copyWith(5 as unknown as object, 'k', 1)).toEqual({ k: 1 });
  });

  test('keeps an own __proto__ key of parsed JSON a property, never the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const copy = copyWith(parsed, 'k', 1);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1,"k":1}');
  });
});
