import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * A check of an `Authorization` header against the gateway's token. Both sides are
 * compared as SHA-256 digests, always 32 bytes: a wrong-length token costs the same
 * compare as a right-length one, so the time taken tells nothing about the token's length.
 */
export function bearerMatcher(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    // The scheme is case-insensitive (RFC 6750 §2.1 by way of RFC 9110 §11.1).
    const given = authorization !== undefined && /^bearer /i.test(authorization) ? authorization.slice(7) : '';
    // Digest even the empty string: no early return, the same work whatever was sent.
    const same = timingSafeEqual(digest(given), expected);
    return same && given !== '';
  };
}
