import { nestsDeeperThan } from '../../../src/protocol/engine/json-depth.js';

/** `levels` objects and arrays nested one in the next, built without recursion. */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { next: value } : [1, value];
  return value;
}

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 'c' }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 'c' }] }, 2)).toBe(true);
  });

  it('takes a value exactly as deep as the limit, and refuses one level more', () => {
    expect(nestsDeeperThan(nested(256), 256)).toBe(false);
    expect(nestsDeeperThan(nested(257), 256)).toBe(true);
    // The deepest branch counts, wherever it is.
    expect(nestsDeeperThan({ shallow: 1, deep: nested(300), after: {} }, 256)).toBe(true);
  });

  it('answers for any depth without overflowing the stack, and calls a cycle too deep', () => {
    expect(nestsDeeperThan(nested(1_000_000), 256)).toBe(true);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(nestsDeeperThan(cycle, 256)).toBe(true);
  });
});
