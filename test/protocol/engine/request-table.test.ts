import { RequestTable } from '../../../src/protocol/engine/request-table.js';

// Pending requests by id: every request present is found by its id, whatever outlived
// how many later ids, and an answered one is gone.

const request = (id: number) => ({ id });

test('finds each request by its id until it is deleted', () => {
  const table = new RequestTable<{ id: number }>();
  const [one, two] = [request(1), request(2)];
  table.add(one);
  table.add(two);
  expect([table.get(1), table.get(2), table.get(3)]).toEqual([one, two, undefined]);
  expect(table.delete(one)).toBe(true);
  expect(table.delete(one)).toBe(false);
  expect(table.get(1)).toBeUndefined();
  expect(table.size).toBe(1);
});

test('a request that outlives thousands of later ids is still found, and only by its own id', () => {
  const table = new RequestTable<{ id: number }>();
  const lasting = request(1);
  table.add(lasting);
  for (let id = 2; id < 5000; id++) {
    const short = request(id);
    table.add(short);
    expect(table.get(id)).toBe(short);
    expect(table.delete(short)).toBe(true);
  }
  expect(table.get(1)).toBe(lasting);
  expect(table.get(1 + 64)).toBeUndefined();
  expect(table.size).toBe(1);
  expect(table.delete(lasting)).toBe(true);
  expect(table.values()).toEqual([]);
});

test('many requests in flight at once are all kept, and listed oldest first', () => {
  const table = new RequestTable<{ id: number }>();
  const lasting = request(3);
  table.add(lasting);
  const many = Array.from({ length: 1000 }, (_, i) => request(100 + i));
  for (const entry of many) table.add(entry);
  expect(table.size).toBe(1001);
  for (const entry of many) expect(table.get(entry.id)).toBe(entry);
  expect(table.values()).toEqual([lasting, ...many]);
  for (const entry of many.filter((entry) => entry.id % 2 === 0)) table.delete(entry);
  expect(table.values().map((entry) => entry.id)).toEqual([3, ...many.filter((entry) => entry.id % 2 === 1).map((entry) => entry.id)]);
});

test('ids that are no request are not found', () => {
  const table = new RequestTable<{ id: number }>();
  table.add(request(0));
  expect(table.get(Number.NaN)).toBeUndefined();
  expect(table.get(0.5)).toBeUndefined();
  expect(table.get(-64)).toBeUndefined();
  expect(table.get(2 ** 40)).toBeUndefined();
});

test('a table grown for a burst of requests shrinks back once they are all answered', () => {
  const table = new RequestTable<{ id: number }>();
  const burst = Array.from({ length: 10_000 }, (_, i) => request(i + 1));
  for (const entry of burst) table.add(entry);
  expect(table.capacity).toBeGreaterThanOrEqual(20_000);
  for (const entry of burst.slice(0, -1)) table.delete(entry);
  // One still in flight: the table stays as it is.
  expect(table.capacity).toBeGreaterThanOrEqual(20_000);
  expect(table.get(10_000)).toBe(burst[9_999]);
  table.delete(burst[9_999]);
  expect(table.capacity).toBe(64);
  // Later ids are kept and found as before.
  const next = request(10_001);
  table.add(next);
  expect(table.get(10_001)).toBe(next);
  expect(table.values()).toEqual([next]);
});
