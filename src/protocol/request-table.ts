/**
 * Pending requests by id, for ids handed out in order: an array indexed by the id's low
 * bits, doubled while more than half of it is in use. A request that outlives the next
 * `capacity` ids moves aside into a Map when a newer id needs its place; that Map holds
 * only such long-lived requests.
 *
 * Not one Map for all of them: a Map whose keys keep changing replaces its hash table
 * every few hundred entries, and the replaced table keeps a link to its successor. Once a
 * table has reached the old generation (after any full GC, which a long-running host
 * always has), those links keep every later table alive through the scavenges, and with
 * each table the requests it held and all that hangs from them: the promise, the answer,
 * the caller's continuation. About a fifth of what a call allocated then survived each
 * scavenge, was promoted, and the scavenges took 5-10 ms instead of 0.5 ms (bench/PROFILE.md).
 * An array's emptied slot holds nothing.
 */
export class RequestTable<T extends { readonly id: number }> {
  private slots: (T | undefined)[] = new Array<T | undefined>(64).fill(undefined);
  private mask = 63;
  private aside: Map<number, T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** `entry.id` must be a non-negative integer not already present. */
  add(entry: T): void {
    if (++this.count > this.slots.length >> 1) this.grow();
    this.place(entry);
  }

  get(id: number): T | undefined {
    const entry = this.slots[id & this.mask];
    return entry !== undefined && entry.id === id ? entry : this.aside?.get(id);
  }

  /** Removes `entry`; false if it was not here. */
  delete(entry: T): boolean {
    const slot = entry.id & this.mask;
    if (this.slots[slot] === entry) this.slots[slot] = undefined;
    else if (!this.aside?.delete(entry.id)) return false;
    this.count--;
    return true;
  }

  /** The entries, oldest id first: a copy, so the caller may delete while it walks them. */
  values(): T[] {
    const entries: T[] = [];
    if (this.count === 0) return entries;
    for (const entry of this.slots) if (entry !== undefined) entries.push(entry);
    if (this.aside) entries.push(...this.aside.values());
    return entries.sort((a, b) => a.id - b.id);
  }

  private place(entry: T): void {
    const slot = entry.id & this.mask;
    const holder = this.slots[slot];
    if (holder !== undefined) (this.aside ??= new Map()).set(holder.id, holder);
    this.slots[slot] = entry;
  }

  private grow(): void {
    const entries = this.values();
    this.slots = new Array<T | undefined>(this.slots.length * 2).fill(undefined);
    this.mask = this.slots.length - 1;
    this.aside = undefined;
    for (const entry of entries) this.place(entry);
  }
}
