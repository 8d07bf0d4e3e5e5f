import { mustBe, shown } from '../../src/util/check.js';

describe('the one validation message shape', () => {
  it('names the field, what it must be, the value and its type', () => {
    expect(mustBe('timeout', 'a non-negative number of milliseconds', -1)).toBe('`timeout` must be a non-negative number of milliseconds, got -1 (number)');
  });

  it('shows NaN and the infinities as themselves, not as the null JSON would write', () => {
    expect(shown(Number.NaN)).toBe('NaN (number)');
    expect(shown(-Infinity)).toBe('-Infinity (number)');
  });

  it('shows a URL without its password, cuts a long value, and names the type of what JSON cannot write', () => {
    expect(shown('redis://user:secret@host:6379')).toBe('"redis://host:6379" (string)');
    expect(shown('x'.repeat(100))).toBe(`"${'x'.repeat(59)}… (string)`);
    expect(shown(10n)).toBe('10 (bigint)');
    expect(shown(() => 1)).toBe('a function (function)');
    expect(shown(null)).toBe('null (null)');
    expect(shown([1])).toBe('[1] (array)');
  });
});
