import type { Tool } from '../protocol/types.js';
import { PostingList } from './posting-list.js';
import { cosine, EmbeddingCache, embedQuery, type EmbedFunction, fuseRankings } from './embedding-rank.js';
import { queryTerms } from './query-words.js';
import { tokenize } from './tokenize.js';

/** What the index ranks: a tool under its public name, with its server and its own definition. */
export interface SearchableTool {
  name: string;
  server: string;
  tool: Tool;
}

/** A search hit: the tool and how well it matched (higher is better; only comparable within one query). */
export type ToolMatch = SearchableTool & { score: number };

/**
 * A pool's search answer: the matches, best first, and what the search could not see.
 * A search starts nothing, so a server whose tools are neither known (listed since start)
 * nor in the manifest cache is not searched: warm up with `listTools()` once, or a `cacheDir`.
 */
export type ToolSearchResult = ToolMatch[] & {
  /** No server searched had known tools: an empty answer says nothing about the query. */
  nothingIndexed: boolean;
  /** The servers searched whose tools are not known yet. */
  unindexed: string[];
};

/** Options of `searchTools` (a manager's or a session's). */
export interface SearchToolsOptions {
  /** Most matches returned. Default 8. */
  limit?: number;
  /** Only tools of these servers. Default: all (of the session). */
  servers?: string[];
  /**
   * The host's embedding model, for a hybrid rank: BM25 and cosine similarity fused by
   * reciprocal rank. Each tool's vector is made once per function and tool and made again
   * when the tool changes, so pass the same function each time. Default: BM25 alone.
   */
  embed?: EmbedFunction;
}

export interface SearchOptions<T extends SearchableTool> {
  /** Most matches returned. Default 8. */
  limit?: number;
  /** Only tools of these servers. Default: all. */
  servers?: ReadonlySet<string>;
  /** Only tools this accepts (a session's filter). */
  accept?: (tool: T) => boolean;
}

export const DEFAULT_SEARCH_LIMIT = 8;

// BM25 parameters: the usual ones; tool documents are short, so length matters a little less.
const K1 = 1.2;
const B = 0.6;
// Field weights, as repeated term frequency (a simple BM25F): names say most about a tool,
// a description's first sentence says what it does, the rest mostly how (and its caveats).
const WEIGHT = { rawName: 3, title: 2, serverName: 1, summary: 1, description: 0.5, parameter: 1, parameterText: 0.5 } as const;

interface Doc<T> {
  entry: T;
  length: number;
  terms: Map<string, number>;
  /** The raw and public names, lower-case with separators removed, for exact matching. */
  keys: string[];
}

/**
 * A BM25 index over tools, updated one server at a time. An exact name (public or raw,
 * ignoring case and `_`/`-`/`.` separators) ranks first, then a name one or two edits away,
 * then the rest by BM25 — so a model that knows the name always finds it, which BM25 alone
 * does not promise.
 */
export class ToolSearchIndex<T extends SearchableTool = SearchableTool> {
  private readonly docs: (Doc<T> | undefined)[] = [];
  private readonly free: number[] = [];
  private readonly byServer = new Map<string, { source: readonly T[]; ids: number[] }>();
  private readonly postings = new Map<string, PostingList>();
  private readonly byKey = new Map<string, number[]>();
  /** Each raw-name key with one character deleted, for near-exact matches (symmetric delete). */
  private readonly byDeletion = new Map<string, number[]>();
  private totalLength = 0;
  private count = 0;
  private scratch = new Float64Array(0);
  private touchedScratch = new Int32Array(0);
  /** Each doc's BM25 length normalisation, K1 · (1 − B + B · length / average); stale after any change. */
  private norms = new Float64Array(0);
  private normsStale = true;
  private readonly embeddings = new EmbeddingCache();

  /** Tools indexed. */
  get size(): number {
    return this.count;
  }

  /**
   * Makes the index hold exactly `tools` for `server` (undefined: none). The same array as
   * last time is a no-op, so callers may sync on every search.
   */
  update(server: string, tools: readonly T[] | undefined): void {
    const current = this.byServer.get(server);
    if (current?.source === tools) return;
    if (current) {
      this.removeAll(current.ids);
      this.byServer.delete(server);
    }
    if (tools) this.byServer.set(server, { source: tools, ids: tools.map((t) => this.add(t)) });
  }

  /** The best `limit` matches for a query, best first. */
  search(query: string, options: SearchOptions<T> = {}): (T & { score: number })[] {
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    if (this.count === 0 || limit <= 0) return [];
    const usable = (id: number): boolean => {
      const doc = this.docs[id]!;
      return (!options.servers || options.servers.has(doc.entry.server)) && (!options.accept || options.accept(doc.entry));
    };
    if (this.scratch.length < this.docs.length) {
      this.scratch = new Float64Array(this.docs.length * 2);
      this.touchedScratch = new Int32Array(this.docs.length * 2);
    }
    const scores = this.scratch;
    // Each doc enters `touched` once, when its score first leaves 0 (every term adds a positive amount).
    const touched = this.touchedScratch;
    let touchedCount = 0;
    const norms = this.currentNorms();
    for (const [term, weight] of queryTerms(query)) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const idf = weight * Math.log(1 + (this.count - posting.size + 0.5) / (posting.size + 0.5));
      const { ids, tfs, size } = posting;
      for (let i = 0; i < size; i++) {
        const id = ids[i];
        const tf = tfs[i];
        if (scores[id] === 0) touched[touchedCount++] = id;
        scores[id] += (idf * tf * (K1 + 1)) / (tf + norms[id]);
      }
    }
    const tiers = this.nameMatches(query);
    for (const id of tiers.keys()) if (scores[id] === 0) touched[touchedCount++] = id;
    let best = 0;
    if (tiers.size > 0) for (let i = 0; i < touchedCount; i++) best = Math.max(best, scores[touched[i]]);
    // Name tiers sit above every BM25 score of this query, so the score order is the rank order.
    const ranked: { id: number; score: number }[] = [];
    for (let i = 0; i < touchedCount; i++) {
      const id = touched[i];
      const score = tiers.size === 0 ? scores[id] : scores[id] + (tiers.get(id) ?? 0) * (best + 1);
      scores[id] = 0;
      if (score <= 0) continue;
      // Most docs fall below a full list's last score: skip them before the filter and the insertion.
      if (ranked.length === limit && score < ranked[limit - 1].score) continue;
      if (usable(id)) insertTop(ranked, { id, score }, limit, this.docs);
    }
    return ranked.map(({ id, score }) => ({ ...this.docs[id]!.entry, score }));
  }

  /**
   * Like {@link search}, with a host's embedding model beside BM25: the tools' BM25 ranking
   * and their ranking by cosine similarity to the query are fused by reciprocal rank; an
   * exact or near-exact name still ranks first. Each tool's vector is made once per embed
   * function and again only when the tool's text changes. Unlike BM25 alone, every
   * searchable tool is ranked, so a query sharing no word with any tool still finds some.
   */
  async searchHybrid(query: string, embed: EmbedFunction, options: SearchOptions<T> = {}): Promise<(T & { score: number })[]> {
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    const usable: T[] = [];
    for (const doc of this.docs) {
      if (doc && (!options.servers || options.servers.has(doc.entry.server)) && (!options.accept || options.accept(doc.entry))) usable.push(doc.entry);
    }
    if (usable.length === 0 || limit <= 0) return [];
    const [vectors, asked] = await Promise.all([this.embeddings.vectors(embed, usable, !options.servers && !options.accept), embedQuery(embed, query)]);
    const similar = usable
      .map((entry, i) => ({ entry, similarity: cosine(asked, vectors[i]) }))
      .sort((a, b) => b.similarity - a.similarity)
      .map((s) => s.entry);
    // Ranked after the wait, as the index stands now; a tool gone meanwhile is left out of both.
    const lexical = this.search(query, { ...options, limit: usable.length });
    const present = new Set(lexical.map((t) => t.name));
    const current = new Set<string>();
    for (const doc of this.docs) if (doc) current.add(doc.entry.name);
    const first = new Map<string, number>();
    for (const [id, tier] of this.nameMatches(query)) first.set(this.docs[id]!.entry.name, tier);
    for (const name of first.keys()) if (!present.has(name)) first.delete(name);
    return fuseRankings([lexical, similar.filter((t) => current.has(t.name))], first, limit);
  }

  private add(entry: T): number {
    const terms = new Map<string, number>();
    let length = 0;
    const put = (text: string | undefined, weight: number) => {
      if (!text) return;
      for (const term of tokenize(text)) {
        terms.set(term, (terms.get(term) ?? 0) + weight);
        length += weight;
      }
    };
    const { tool } = entry;
    put(tool.name, WEIGHT.rawName);
    put(tool.title, WEIGHT.title);
    put(typeof tool.annotations?.title === 'string' ? tool.annotations.title : undefined, WEIGHT.title);
    put(entry.server, WEIGHT.serverName);
    const [summary, rest] = splitSummary(tool.description);
    put(summary, WEIGHT.summary);
    put(rest, WEIGHT.description);
    for (const parameter of parameterWords(tool.inputSchema)) put(parameter.text, parameter.name ? WEIGHT.parameter : WEIGHT.parameterText);
    const keys = [...new Set([nameKey(tool.name), nameKey(entry.name)])];
    const doc: Doc<T> = { entry, length: Math.max(length, 1), terms, keys };
    const id = this.free.pop() ?? this.docs.length;
    this.docs[id] = doc;
    this.count++;
    this.totalLength += doc.length;
    for (const [term, tf] of terms) {
      let posting = this.postings.get(term);
      if (!posting) this.postings.set(term, (posting = new PostingList()));
      posting.add(id, tf);
    }
    this.normsStale = true;
    for (const key of keys) push(this.byKey, key, id);
    for (const variant of deletions(keys[0])) push(this.byDeletion, variant, id);
    return id;
  }

  /** Removes a server's docs, compacting each posting list they were in once rather than once per doc. */
  private removeAll(ids: readonly number[]): void {
    const removed = new Set<number>();
    const dirty = new Set<string>();
    for (const id of ids) {
      const doc = this.docs[id];
      if (!doc) continue;
      removed.add(id);
      for (const term of doc.terms.keys()) dirty.add(term);
      for (const key of doc.keys) pull(this.byKey, key, id);
      for (const variant of deletions(doc.keys[0])) pull(this.byDeletion, variant, id);
      this.totalLength -= doc.length;
      this.count--;
      this.docs[id] = undefined;
      this.free.push(id);
    }
    for (const term of dirty) {
      const posting = this.postings.get(term)!;
      posting.removeAll(removed);
      if (posting.size === 0) this.postings.delete(term);
    }
    this.normsStale = true;
  }

  /** The docs' length normalisations for the current average length, recomputed only after a change. */
  private currentNorms(): Float64Array {
    if (!this.normsStale && this.norms.length >= this.docs.length) return this.norms;
    if (this.norms.length < this.docs.length) this.norms = new Float64Array(this.docs.length * 2);
    const average = this.totalLength / this.count;
    for (let id = 0; id < this.docs.length; id++) {
      const doc = this.docs[id];
      if (doc) this.norms[id] = K1 * (1 - B + (B * doc.length) / average);
    }
    this.normsStale = false;
    return this.norms;
  }

  /** Docs whose name the query is (tier 2) or nearly is (tier 1), when the query is one word. */
  private nameMatches(query: string): Map<number, number> {
    const tiers = new Map<number, number>();
    const trimmed = query.trim();
    if (trimmed === '' || /\s/.test(trimmed)) return tiers;
    const key = nameKey(trimmed);
    for (const id of this.byKey.get(key) ?? []) tiers.set(id, 2);
    if (key.length < 4) return tiers;
    const allowed = key.length >= 8 ? 2 : 1;
    const near = (id: number) => {
      if (!tiers.has(id) && this.docs[id]!.keys.some((k) => editDistance(key, k, allowed) <= allowed)) tiers.set(id, 1);
    };
    // Symmetric delete: a name one edit away shares the key or a one-deletion variant with the query.
    for (const id of this.byDeletion.get(key) ?? []) near(id);
    for (const variant of deletions(key)) {
      for (const id of this.byKey.get(variant) ?? []) near(id);
      for (const id of this.byDeletion.get(variant) ?? []) near(id);
    }
    return tiers;
  }
}

/** Keeps `ranked` the best `limit` entries, best first; ties go to the shorter, then smaller name. */
function insertTop<T extends SearchableTool>(ranked: { id: number; score: number }[], item: { id: number; score: number }, limit: number, docs: (Doc<T> | undefined)[]): void {
  const before = (a: { id: number; score: number }, b: { id: number; score: number }) =>
    a.score !== b.score ? a.score > b.score : docs[a.id]!.entry.name < docs[b.id]!.entry.name;
  if (ranked.length === limit && !before(item, ranked[limit - 1])) return;
  let i = ranked.length < limit ? ranked.length : limit - 1;
  if (ranked.length < limit) ranked.push(item);
  else ranked[i] = item;
  while (i > 0 && before(ranked[i], ranked[i - 1])) {
    [ranked[i], ranked[i - 1]] = [ranked[i - 1], ranked[i]];
    i--;
  }
}

/** A name without case or separators: `read_file`, `readFile` and `Read-File` are one name. */
function nameKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function deletions(key: string): string[] {
  if (key.length < 4) return [];
  const out = new Set<string>();
  for (let i = 0; i < key.length; i++) out.add(key.slice(0, i) + key.slice(i + 1));
  return [...out];
}

/** A description's first sentence, and the rest. */
function splitSummary(description: string | undefined): [string | undefined, string | undefined] {
  if (!description) return [undefined, undefined];
  const end = /[.!?](?:\s|$)|\n\s*\n/.exec(description);
  return end ? [description.slice(0, end.index + 1), description.slice(end.index + 1)] : [description, undefined];
}

/** Most parameter texts read from one schema: a hostile schema cannot make indexing slow. */
const MAX_PARAMETER_TEXTS = 300;

/**
 * What an input schema says about its parameters, nested objects and array items included:
 * property names (`name`), and their descriptions and string enum values (a tool that takes
 * a city out of "Chicago" and "New York" is found by "the weather in Chicago").
 */
function parameterWords(schema: unknown): { text: string; name: boolean }[] {
  const out: { text: string; name: boolean }[] = [];
  const visit = (node: unknown, depth: number) => {
    if (depth > 4 || out.length > MAX_PARAMETER_TEXTS || typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (depth > 0 && typeof record.description === 'string') out.push({ text: record.description.slice(0, 500), name: false });
    if (depth > 0 && Array.isArray(record.enum)) {
      for (const value of record.enum.slice(0, 50)) if (typeof value === 'string') out.push({ text: value.slice(0, 100), name: false });
    }
    if (typeof record.properties === 'object' && record.properties !== null) {
      for (const [name, child] of Object.entries(record.properties)) {
        out.push({ text: name, name: true });
        visit(child, depth + 1);
      }
    }
    if (record.items) visit(record.items, depth + 1);
  };
  visit(schema, 0);
  return out;
}

/** Levenshtein distance, giving up (returning `bound + 1`) once it must exceed `bound`. */
export function editDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let smallest = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      smallest = Math.min(smallest, row[j]);
    }
    if (smallest > bound) return bound + 1;
    previous = row;
  }
  return previous[b.length];
}

function push(map: Map<string, number[]>, key: string, id: number): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}

function pull(map: Map<string, number[]>, key: string, id: number): void {
  const list = map.get(key);
  if (!list) return;
  const at = list.indexOf(id);
  if (at >= 0) list.splice(at, 1);
  if (list.length === 0) map.delete(key);
}
