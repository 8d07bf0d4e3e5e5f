/** A body read under a byte bound: its text, or how big it got before reading stopped. */
export type BoundedBody = { ok: true; text: string } | { ok: false; bytes: number };

/** Reads a response body as UTF-8, stopping (and cancelling the body) past `maxBytes`. */
export async function readBounded(response: Response, maxBytes: number): Promise<BoundedBody> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return { ok: false, bytes: declared };
  }
  if (!response.body) return { ok: true, text: '' };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > maxBytes) {
        await reader.cancel().catch(() => {});
        return { ok: false, bytes };
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}

/** Drains a body nobody needs, so that undici can put the connection back in its pool. */
export async function discardBody(response: Response): Promise<void> {
  try {
    await response.arrayBuffer();
  } catch {
    // A body that fails to drain only costs the connection.
  }
}
