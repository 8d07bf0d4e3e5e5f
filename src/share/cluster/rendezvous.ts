import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest random weight) hashing: the owner of `key` is the member whose hash
 * of (key, member) is highest. Every member computes the same owner from the same live
 * set, and a member joining or leaving moves only the keys it wins or held.
 */
export function ownerOf(key: string, members: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestWeight = '';
  for (const member of members) {
    const weight = createHash('sha256').update(key).update('\0').update(member).digest('hex');
    if (best === undefined || weight > bestWeight || (weight === bestWeight && member > best)) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}

/** What a server is placed by: its fingerprint and the principal it runs for ('' for everyone). */
export function placementKey(fingerprint: string, principal = ''): string {
  return `${fingerprint}\0${principal}`;
}
