/**
 * Bytes received but not yet framed, kept as the chunks they arrived in so that a
 * message costs one copy when it is complete, not one per chunk.
 */
export class ChunkBuffer {
  private chunks: Buffer[] = [];
  private total = 0;

  get length(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.total += chunk.length;
  }

  /** The first `n` bytes as one Buffer, left in place; copies only when they span chunks. */
  peek(n: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) return first.subarray(0, n);
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    for (const chunk of this.chunks) {
      if (filled === n) break;
      filled += chunk.copy(out, filled, 0, Math.min(chunk.length, n - filled));
    }
    return out;
  }

  drop(n: number): void {
    let whole = 0;
    let left = n;
    while (left > 0 && this.chunks[whole].length <= left) left -= this.chunks[whole++].length;
    // One splice per call: shifting chunk by chunk would be quadratic in the chunk count.
    if (whole > 0) this.chunks.splice(0, whole);
    if (left > 0) this.chunks[0] = this.chunks[0].subarray(left);
    this.total -= n;
  }

  take(n: number): Buffer {
    const out = this.peek(n);
    this.drop(n);
    return out;
  }

  /** Everything buffered, then `tail`, as one Buffer; the buffer is left empty. */
  takeAll(tail?: Buffer): Buffer {
    if (tail !== undefined) this.push(tail);
    return this.take(this.total);
  }

  clear(): void {
    this.chunks = [];
    this.total = 0;
  }
}
