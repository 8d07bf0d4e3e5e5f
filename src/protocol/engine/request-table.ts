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
 *
 * A table grown for a burst goes back to its first size when the burst is over (it empties):
 * 10,000 requests in flight once must not keep 32,768 slots for the session's life.
 */
export class RequestTable<T extends { readonly id: number }> {
  private slots: (T | undefined)[] = new Array<T | undefined>(INITIAL_SLOTS).fill(undefined);
  private mask = INITIAL_SLOTS - 1;
  private aside: Map<number, T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Slots the table holds now (it grows with the requests in flight, and shrinks when they are all over). */
  get capacity(): number {
    return this.slots.length;
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
    // Only a table past its usual size is replaced: a caller whose calls go one at a time empties it on every call.
    if (--this.count === 0 && this.slots.length > SHRINK_ABOVE) this.reset();
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

  private reset(): void {
    this.slots = new Array<T | undefined>(INITIAL_SLOTS).fill(undefined);
    this.mask = INITIAL_SLOTS - 1;
    this.aside = undefined;
  }

  private grow(): void {
    const entries = this.values();
    this.slots = new Array<T | undefined>(this.slots.length * 2).fill(undefined);
    this.mask = this.slots.length - 1;
    this.aside = undefined;
    for (const entry of entries) this.place(entry);
  }
}

const INITIAL_SLOTS = 64;
/** A table this large or smaller is kept when it empties (8 KiB): bursts of up to 512 in flight cost no new array each. */
const SHRINK_ABOVE = 1024;
