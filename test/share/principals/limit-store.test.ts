import { MemoryLimitStore } from '../../../src/share/principals/limit-store.js';

const spec = { capacity: 2, refillPerSecond: 4 };

describe('token buckets in memory', () => {
  it('lets a burst of capacity through, then says when a token is back', () => {
    const store = new MemoryLimitStore();
    expect(store.take([{ key: 'a', spec }], 0)).toEqual({ ok: true });
    expect(store.take([{ key: 'a', spec }], 0)).toEqual({ ok: true });
    expect(store.take([{ key: 'a', spec }], 0)).toEqual({ ok: false, retryAfterMs: 250 });
    expect(store.take([{ key: 'a', spec }], 100)).toEqual({ ok: false, retryAfterMs: 150 });
    expect(store.take([{ key: 'a', spec }], 250)).toEqual({ ok: true });
    // Refill never goes past capacity.
    expect(store.take([{ key: 'a', spec }], 60_000)).toEqual({ ok: true });
    expect(store.take([{ key: 'a', spec }], 60_000)).toEqual({ ok: true });
    expect(store.take([{ key: 'a', spec }], 60_000).ok).toBe(false);
  });

  it('takes from every bucket or from none', () => {
    const store = new MemoryLimitStore();
    const wide = { capacity: 5, refillPerSecond: 1 };
    const narrow = { capacity: 1, refillPerSecond: 1 };
    expect(store.take([{ key: 'p', spec: wide }, { key: 't1', spec: narrow }], 0)).toEqual({ ok: true });
    expect(store.take([{ key: 'p', spec: wide }, { key: 't1', spec: narrow }], 0)).toEqual({ ok: false, retryAfterMs: 1000 });
    // The refused call cost the wide bucket nothing: four more fit.
    for (let i = 2; i <= 5; i++) expect(store.take([{ key: 'p', spec: wide }, { key: `t${i}`, spec: narrow }], 0)).toEqual({ ok: true });
    expect(store.take([{ key: 'p', spec: wide }], 0)).toEqual({ ok: false, retryAfterMs: 1000 });
  });

  it('holds at most maxBuckets, forgetting the longest unused (a full bucket is the same as none)', () => {
    const store = new MemoryLimitStore(2);
    const one = { capacity: 1, refillPerSecond: 0.001 };
    store.take([{ key: 'a', spec: one }], 0);
    store.take([{ key: 'b', spec: one }], 0);
    store.take([{ key: 'c', spec: one }], 0);
    expect(store.take([{ key: 'c', spec: one }], 0).ok).toBe(false);
    expect(store.take([{ key: 'a', spec: one }], 0)).toEqual({ ok: true });
  });
});
