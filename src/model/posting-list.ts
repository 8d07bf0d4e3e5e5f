/**
 * The documents holding one term, with the term's frequency in each, in the order they were
 * added. Typed arrays rather than a Map: a query walks tens of thousands of these entries, and
 * a flat array walk is several times cheaper than Map iteration.
 */
export class PostingList {
  /** Entries in use; `ids` and `tfs` are valid below this. */
  size = 0;
  ids: Int32Array;
  tfs: Float64Array;

  constructor(capacity = 4) {
    this.ids = new Int32Array(capacity);
    this.tfs = new Float64Array(capacity);
  }

  add(id: number, tf: number): void {
    if (this.size === this.ids.length) {
      const ids = new Int32Array(this.size * 2);
      const tfs = new Float64Array(this.size * 2);
      ids.set(this.ids);
      tfs.set(this.tfs);
      this.ids = ids;
      this.tfs = tfs;
    }
    this.ids[this.size] = id;
    this.tfs[this.size] = tf;
    this.size++;
  }

  /** Drops every entry whose id `removed` holds, keeping the others' order: one pass for a whole server's tools. */
  removeAll(removed: ReadonlySet<number>): void {
    let kept = 0;
    for (let i = 0; i < this.size; i++) {
      const id = this.ids[i];
      if (removed.has(id)) continue;
      this.ids[kept] = id;
      this.tfs[kept] = this.tfs[i];
      kept++;
    }
    this.size = kept;
  }
}
