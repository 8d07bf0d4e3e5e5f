// The words of a search query, with the words tool authors would have used for the same
// thing. People ask "remember that Alice likes tea" or "add 2 and 40"; tools say "create
// entities in the knowledge graph" and "returns the sum of two numbers". Each query word
// brings its related words (search-vocabulary.ts) at a lower weight than its own, so a
// tool that uses the asker's own word still ranks first.
import { EXTENSIONS, IMPLIES, PHRASES, QUESTION_WORDS, SYNONYMS } from './search-vocabulary.js';
import { stem, tokenize } from './tokenize.js';

/** A related word counts this much of the query word it came from. */
export const RELATED_WEIGHT = 0.5;

/** The imperative verb that opens most requests says what to do: it and its related words count this much more. */
const LEADING_WEIGHT = 1.5;

/** Longest query read: a request is a sentence or two, and a hostile one must not cost more. */
const MAX_QUERY = 2000;

/** A question asks for what is known: "what do you remember" recalls, where "remember this" stores. */
const QUESTION = /^\s*(?:what|which|who|whom|whose|where|when|how|why|do|does|did|is|are|can|could|have|has)\b|\?\s*$/i;

/** Each stemmed word's related words; made at the first search, not at the package's import (issue 34). */
let related: Map<string, Set<string>> | undefined;

function relatedTable(): Map<string, Set<string>> {
  if (related) return related;
  const table = new Map<string, Set<string>>();
  const relate = (word: string, other: string) => {
    let set = table.get(word);
    if (!set) table.set(word, (set = new Set()));
    set.add(other);
  };
  for (const group of SYNONYMS) {
    const stems = group.map(stem);
    for (const word of stems) for (const other of stems) if (other !== word) relate(word, other);
  }
  for (const [word, implied] of Object.entries(IMPLIES)) for (const other of implied) relate(stem(word), stem(other));
  for (const [kind, extensions] of Object.entries(EXTENSIONS)) {
    for (const extension of extensions) for (const other of [kind, 'file']) relate(extension, stem(other));
  }
  return (related = table);
}

/** The words a stemmed word also stands for (none for most). */
export function relatedWords(term: string): readonly string[] {
  const related = relatedTable().get(term);
  if (related) return [...related];
  // A number in a request ("add 2 and 40") is a value for a tool that takes numbers.
  return /^\d+(?:\.\d+)?$/.test(term) ? ['number'] : [];
}

/**
 * A query's weighted terms: its own words at weight 1 (its first word, the verb of most
 * requests, at {@link LEADING_WEIGHT}); their related words at {@link RELATED_WEIGHT} of
 * that; question words as what they ask for; a name (a capitalised word inside the
 * sentence, a file name's stem) as itself only.
 */
export function queryTerms(query: string): Map<string, number> {
  let text = query.length > MAX_QUERY ? query.slice(0, MAX_QUERY) : query;
  for (const [pattern, replacement] of PHRASES) text = text.replace(pattern, replacement);
  if (QUESTION.test(text)) text = text.replace(/\b(?:remember|know)\b/gi, 'recall');
  const terms = new Map<string, number>();
  const put = (term: string, weight: number) => {
    if ((terms.get(term) ?? 0) < weight) terms.set(term, weight);
  };
  const names = properNames(text);
  const own = tokenize(text);
  const leading = /^\s*[a-z]/i.test(text) ? own[0] : undefined;
  for (const term of own) put(term, term === leading ? LEADING_WEIGHT : 1);
  for (const term of own) {
    // "New York" is a place, not a request for something new.
    if (names.has(term)) continue;
    for (const other of relatedWords(term)) put(other, RELATED_WEIGHT * (term === leading ? LEADING_WEIGHT : 1));
  }
  for (const [word, implied] of Object.entries(QUESTION_WORDS)) {
    if (new RegExp(`\\b${word}\\b`, 'i').test(text)) for (const other of implied) put(stem(other), RELATED_WEIGHT);
  }
  // Two file names or more ("read a.txt and b.txt"): a tool for several files at once.
  if (fileNames(text).length >= 2) put(stem('multiple'), 1);
  return terms;
}

/** File names in a text (`notes.txt`, `src/main.py`): their extension says what they hold, the rest is a name. */
function fileNames(text: string): string[] {
  return text.match(/[\w/-]*\w\.[a-z][a-z0-9]{0,4}\b/gi) ?? [];
}

/**
 * Stemmed words that name something rather than ask for it: capitalised words after a
 * sentence's first word (people, places, things) and the stems of file names (`notes`
 * of `notes.txt` is not a note).
 */
function properNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/(?<=[^.!?:\s]\s+)[A-Z][a-z]+\b(?!\.\w)/g)) for (const term of tokenize(match[0])) names.add(term);
  for (const file of fileNames(text)) for (const term of tokenize(file.slice(0, file.lastIndexOf('.')))) names.add(term);
  return names;
}
