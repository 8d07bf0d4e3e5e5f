import { editDistance } from '../model/tool-search.js';

/** The candidates close to `word` (a third of its length in edits, at least 2), best first. */
export function closest(word: string, candidates: Iterable<string>, limit = 3): string[] {
  const bound = Math.max(2, Math.floor(word.length / 3));
  return [...new Set(candidates)]
    .map((candidate) => [editDistance(word.toLowerCase(), candidate.toLowerCase(), bound), candidate] as const)
    .filter(([distance]) => distance <= bound)
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1))
    .slice(0, limit)
    .map(([, candidate]) => candidate);
}

/** `; did you mean a or b?`, or '' when nothing is close. */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return '';
  return `; did you mean ${names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`}?`;
}
