import { McpError, type McpPhase, serverLabel } from '../errors.js';

/** Pages a list may take before we call the cursor a runaway. */
export const MAX_PAGES = 1000;

/**
 * Follows `nextCursor` to the end and concatenates the pages. A cursor seen before, or
 * more than {@link MAX_PAGES} pages, is a server bug: it ends in `protocol-error`
 * rather than a hang or duplicated entries.
 */
export async function paginate<K extends string, T>(
  server: string | undefined,
  phase: McpPhase,
  key: K,
  fetchPage: (cursor: string | undefined) => Promise<{ [P in K]: T[] } & { nextCursor?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await fetchPage(cursor);
    items.push(...result[key]);
    cursor = result.nextCursor;
    if (cursor === undefined) return items;
    if (seen.has(cursor) || page >= MAX_PAGES) {
      const why = seen.has(cursor) ? `repeated the cursor ${JSON.stringify(cursor.slice(0, 80))}` : `did not end after ${MAX_PAGES} pages`;
      throw new McpError('protocol-error', `${serverLabel(server)}${phase} ${why}; the server's pagination is broken`, { server, phase });
    }
    seen.add(cursor);
  }
}
