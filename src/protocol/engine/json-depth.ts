// What a server sends is parsed by JSON.parse, which takes any depth; JSON.stringify, ajv,
// structuredClone and every recursive walk do not. Depth is measured here without recursion.

/**
 * Deepest nesting of objects and arrays lazy-mcp takes from a server (a tool definition, a
 * result). Real schemas stay far below it; a JSON.stringify of a value this deep is safe.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Whether `value` nests objects or arrays more than `limit` levels deep (a scalar is 0, `{}`
 * is 1). The walk stops one level past `limit`, so any depth is safe to ask about for a
 * `limit` the stack holds (it runs on every tool result: no arrays made on the way); a
 * cycle counts as too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  return value !== null && typeof value === 'object' && deeper(value, limit - 1);
}

/** Whether `node` has objects nested more than `room` levels below it. */
function deeper(node: object, room: number): boolean {
  if (room < 0) return true;
  if (Array.isArray(node)) {
    for (const child of node) if (child !== null && typeof child === 'object' && deeper(child, room - 1)) return true;
    return false;
  }
  for (const key in node) {
    const child = (node as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object' && deeper(child, room - 1)) return true;
  }
  return false;
}
