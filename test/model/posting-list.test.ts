import { PostingList } from '../../src/model/posting-list.js';

const entries = (list: PostingList) => Array.from({ length: list.size }, (_, i) => [list.ids[i], list.tfs[i]]);

describe('posting list', () => {
  it('grows past its capacity keeping every entry in insertion order', () => {
    const list = new PostingList(2);
    for (let id = 0; id < 37; id++) list.add((id * 7) % 37, id + 0.5);
    expect(list.size).toBe(37);
    expect(entries(list)).toEqual(Array.from({ length: 37 }, (_, id) => [(id * 7) % 37, id + 0.5]));
  });

  it('removes a set of ids in one pass, the rest keeping their order and frequencies', () => {
    const list = new PostingList();
    for (const [id, tf] of [[5, 3], [1, 1], [9, 2], [2, 4], [7, 1]]) list.add(id, tf);
    list.removeAll(new Set([1, 7, 42]));
    expect(entries(list)).toEqual([[5, 3], [9, 2], [2, 4]]);
    list.add(1, 6); // a freed id comes back at the end
    expect(entries(list)).toEqual([[5, 3], [9, 2], [2, 4], [1, 6]]);
    list.removeAll(new Set([5, 9, 2, 1]));
    expect(list.size).toBe(0);
  });
});
