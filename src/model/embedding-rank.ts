// A host's own embedding model beside BM25: the two rankings are fused by reciprocal rank
// (Cormack et al., 2009), which needs no calibration between a BM25 score and a cosine.
// Each tool's vector is kept per embed function and per tool, and made again only when
// the text it was made from changes.
import { McpError } from '../errors.js';
import type { SearchableTool } from './tool-search.js';

/**
 * Turns texts into vectors, one per text and in order, all of one length (a host's
 * embedding model: OpenAI's `embeddings.create`, a local model, anything). Called with
 * every tool not embedded yet (in batches of at most {@link EMBED_BATCH}) and with each query.
 */
export type EmbedFunction = (texts: string[]) => Promise<readonly ArrayLike<number>[]> | readonly ArrayLike<number>[];

/** Most texts passed to one call of an embed function. */
export const EMBED_BATCH = 256;

/** The usual constant of reciprocal rank fusion: a rank's weight is 1 / (K + rank). */
const RRF_K = 60;

/** Longest text embedded for a tool: names and descriptions, not whole manuals. */
const MAX_TOOL_TEXT = 2000;

interface Embedded {
  text: string;
  vector: Promise<Float64Array>;
}

/** The vectors of one index's tools, per embed function: a host with two models keeps both. */
export class EmbeddingCache {
  private readonly byFunction = new WeakMap<EmbedFunction, Map<string, Embedded>>();

  /**
   * Each tool's vector, made (in batches) for the tools new to this embed function or whose
   * text changed since; the vectors of tools no longer in `tools` are dropped when `complete`.
   */
  async vectors<T extends SearchableTool>(embed: EmbedFunction, tools: readonly T[], complete: boolean): Promise<Float64Array[]> {
    let cache = this.byFunction.get(embed);
    if (!cache) this.byFunction.set(embed, (cache = new Map()));
    if (complete) {
      const names = new Set(tools.map((t) => t.name));
      for (const name of cache.keys()) if (!names.has(name)) cache.delete(name);
    }
    const missing: { name: string; text: string }[] = [];
    for (const tool of tools) {
      const text = toolText(tool);
      if (cache.get(tool.name)?.text !== text) missing.push({ name: tool.name, text });
    }
    for (let start = 0; start < missing.length; start += EMBED_BATCH) {
      const batch = missing.slice(start, start + EMBED_BATCH);
      const made = embedAll(embed, batch.map((m) => m.text));
      batch.forEach(({ name, text }, i) => {
        const entry: Embedded = { text, vector: made.then((vectors) => vectors[i]) };
        cache.set(name, entry);
        // A failed batch is forgotten, so the next search asks again rather than failing forever.
        entry.vector.catch(() => cache.get(name) === entry && cache.delete(name));
      });
    }
    return Promise.all(tools.map((tool) => (cache.get(tool.name) as Embedded).vector));
  }
}

/** The query's vector. */
export async function embedQuery(embed: EmbedFunction, query: string): Promise<Float64Array> {
  return (await embedAll(embed, [query]))[0];
}

/** Calls the host's function and checks what it gave: one finite vector per text, all of one length. */
async function embedAll(embed: EmbedFunction, texts: string[]): Promise<Float64Array[]> {
  const vectors = await embed(texts);
  if (!Array.isArray(vectors) || vectors.length !== texts.length) {
    throw new McpError('invalid-arguments', `searchTools embed must return one vector per text: got ${Array.isArray(vectors) ? `${vectors.length} vectors` : describe(vectors)} for ${texts.length} texts`);
  }
  return vectors.map((vector, i) => {
    const length = (vector as ArrayLike<number> | null)?.length;
    if (typeof length !== 'number' || length === 0) throw new McpError('invalid-arguments', `searchTools embed returned ${describe(vector)} as vector ${i}; expected an array of numbers`);
    const out = Float64Array.from(vector as ArrayLike<number>);
    if (!out.every(Number.isFinite)) throw new McpError('invalid-arguments', `searchTools embed returned a vector ${i} holding a value that is not a finite number`);
    return out;
  });
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an empty array' : typeof value;
}

/** What a tool's vector is made from: its names, title, description and parameters' names and descriptions. */
export function toolText(entry: SearchableTool): string {
  const { tool } = entry;
  const parts = [tool.name, tool.title, tool.description];
  const properties = (tool.inputSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties === 'object' && properties !== null) {
    for (const [name, schema] of Object.entries(properties).slice(0, 50)) {
      const description = (schema as { description?: unknown } | null)?.description;
      parts.push(typeof description === 'string' ? `${name}: ${description}` : name);
    }
  }
  const text = parts.filter((p): p is string => typeof p === 'string' && p !== '').join('\n');
  return text.length > MAX_TOOL_TEXT ? text.slice(0, MAX_TOOL_TEXT) : text;
}

/** Cosine similarity; vectors of different lengths are an embed function's error. */
export function cosine(a: Float64Array, b: Float64Array): number {
  if (a.length !== b.length) throw new McpError('invalid-arguments', `searchTools embed returned vectors of different lengths (${a.length} and ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Fuses two rankings of the same tools (best first) by reciprocal rank: a tool's score is
 * the sum of 1 / (60 + rank) over the rankings it is in (below 1 for any number of
 * rankings under 60). `first`: by public name, tiers (1, 2) added to that, so an exact or
 * near-exact name ranks above every fused score.
 */
export function fuseRankings<T extends SearchableTool>(rankings: readonly (readonly T[])[], first: ReadonlyMap<string, number>, limit: number): (T & { score: number })[] {
  const scores = new Map<string, { entry: T; score: number }>();
  for (const ranking of rankings) {
    ranking.forEach((entry, rank) => {
      const current = scores.get(entry.name);
      const add = 1 / (RRF_K + rank + 1);
      if (current) current.score += add;
      else scores.set(entry.name, { entry, score: add + (first.get(entry.name) ?? 0) });
    });
  }
  return [...scores.values()]
    .sort((a, b) => b.score - a.score || (a.entry.name < b.entry.name ? -1 : 1))
    .slice(0, limit)
    .map(({ entry, score }) => ({ ...entry, score }));
}
