// What a server sends is parsed by JSON.parse, which takes any depth; JSON.stringify, ajv,
// structuredClone and every recursive walk do not. Depth is measured here without recursion.

/**
 * Deepest nesting of objects and arrays lazy-mcp takes from a server (a tool definition, a
 * result). Real schemas stay far below it; a JSON.stringify of a value this deep is safe.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Whether `value` nests objects or arrays more than `limit` levels deep (a scalar is 0, `{}`
 * is 1). Iterative, so any depth is safe to ask about; a cycle counts as too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
