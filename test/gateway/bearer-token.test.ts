import { bearerMatcher } from '../../src/gateway/bearer-token.js';

describe('the gateway token check', () => {
  const matches = bearerMatcher('s3cret-token');

  it('accepts the token, the scheme in any case', () => {
    expect(matches('Bearer s3cret-token')).toBe(true);
    expect(matches('bearer s3cret-token')).toBe(true);
  });

  it('refuses a token of another length, a prefix, an extension, nothing and other schemes alike', () => {
    for (const header of ['Bearer s', 'Bearer s3cret-toke', 'Bearer s3cret-token!', 'Bearer ', 'Bearer', undefined, '', 'Basic s3cret-token', 's3cret-token', 'Bearer S3CRET-TOKEN']) {
      expect([header, matches(header)]).toEqual([header, false]);
    }
  });

  it('compares digests: a token of any length, even one far longer than the expected one, is compared without throwing', () => {
    expect(matches(`Bearer ${'x'.repeat(100_000)}`)).toBe(false);
    expect(bearerMatcher('ключ-🔑')('Bearer ключ-🔑')).toBe(true);
    expect(bearerMatcher('ключ-🔑')('Bearer ключ-🔐')).toBe(false);
  });
});
