import { ownerOf, placementKey } from '../../../src/share/cluster/rendezvous.js';

describe('rendezvous placement by (fingerprint, principal, member)', () => {
  const members = ['m-a', 'm-b', 'm-c'];
  const fingerprint = '0123456789abcdef0123456789abcdef';

  it('gives different principals of one server different owners, each the same from any member and any order', () => {
    const owners = new Map<string, string>();
    for (let i = 0; i < 64; i++) owners.set(`user-${i}`, ownerOf(placementKey(fingerprint, `user-${i}`), members)!);
    // Spread over every member: a server's principals are not all on the server's shared owner.
    expect(new Set(owners.values())).toEqual(new Set(members));
    for (const [principal, owner] of owners) expect(ownerOf(placementKey(fingerprint, principal), [...members].reverse())).toBe(owner);
    // The principal is part of the key: no principal ('') is the shared server's, a key of its own.
    expect(placementKey(fingerprint, 'user-1')).not.toBe(placementKey(fingerprint));
    expect(placementKey(fingerprint)).toBe(`${fingerprint}\0`);
  });

  it('moves only the principals the leaving member held', () => {
    const principals = Array.from({ length: 64 }, (_, i) => `p${i}`);
    const before = new Map(principals.map((p) => [p, ownerOf(placementKey(fingerprint, p), members)]));
    const after = new Map(principals.map((p) => [p, ownerOf(placementKey(fingerprint, p), ['m-a', 'm-c'])]));
    for (const p of principals) if (before.get(p) !== 'm-b') expect(after.get(p)).toBe(before.get(p));
  });
});
