// Words of names and descriptions for tool search (ASCII letters and digits; other characters separate words): `readTextFile`, `read_text_file`,
// `read-text-file` and `read.text.file` give the same words, in a plain stemmed form so
// "files" finds "file" and "listing" finds "list".

const STOP_WORDS = new Set(
  'a an and are as at be by can do for from has have how i if in into is it its me my of on or our so that the their them then there these this to use used uses using via was what when which will with you your'.split(
    ' ',
  ),
);

/** Short texts (names, parameter names) repeat across tools: their words are kept, up to a bound. */
const memo = new Map<string, string[]>();
const MEMO_LIMIT = 20_000;

/** Lower-case, stemmed words of a text, stop words left out. */
export function tokenize(text: string): string[] {
  const short = text.length <= 64;
  const known = short ? memo.get(text) : undefined;
  if (known) return known;
  const out: string[] = [];
  // One pass: a word ends at a non-alphanumeric, at a lower-to-upper step (`readFile`), and
  // before the last capital of a run followed by 2+ lower-case letters (`HTTPServer`, not `URLs`).
  let word = '';
  const flush = () => {
    if (word !== '') {
      const lower = word.toLowerCase();
      if (!STOP_WORDS.has(lower)) out.push(stem(lower));
      word = '';
    }
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const upper = c >= 65 && c <= 90;
    const lower = c >= 97 && c <= 122;
    const digit = c >= 48 && c <= 57;
    if (!upper && !lower && !digit) {
      flush();
      continue;
    }
    if (upper && word !== '') {
      const prev = word.charCodeAt(word.length - 1);
      const prevUpper = prev >= 65 && prev <= 90;
      if (!prevUpper) flush();
      else if (isLower(text, i + 1) && isLower(text, i + 2)) flush();
    }
    word += text[i];
  }
  flush();
  if (short) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(text, out);
  }
  return out;
}

function isLower(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 97 && c <= 122;
}

/** A deliberately small suffix stripper: enough to join plural and -ing/-ed forms of one word. */
export function stem(word: string): string {
  const stripped = stripSuffix(word);
  // `create`, `creates` and `created` all become `creat`.
  return stripped.length > 4 && stripped.endsWith('e') ? stripped.slice(0, -1) : stripped;
}

function stripSuffix(word: string): string {
  if (word.length <= 3 || /^\d+$/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return undouble(word.slice(0, -2));
  if (word.endsWith('es') && /(ch|sh|x|ss|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is')) return word.slice(0, -1);
  return word;
}

/** `listing` → `list`, `running` → `run`, `created` → `creat` (both sides get the same stem). */
function undouble(word: string): string {
  return word.length > 2 && word[word.length - 1] === word[word.length - 2] && !/[lsz]/.test(word[word.length - 1]) ? word.slice(0, -1) : word;
}

/**
 * Words users and tool authors use for one thing, each group in stemmed form. A query word
 * also finds its group's other words, at a lower weight than the word itself.
 */
const SYNONYM_GROUPS = [
  ['folder', 'directory', 'dir'],
  ['picture', 'image', 'photo', 'img'],
  ['delet', 'remov', 'eras', 'forget'],
  ['find', 'search', 'lookup', 'query'],
  ['creat', 'make', 'add', 'new'],
  ['renam', 'mov'],
  ['fetch', 'download', 'retriev', 'get'],
  ['modify', 'edit', 'updat', 'chang'],
  ['show', 'list', 'display'],
  ['messag', 'mail', 'email'],
].map((words) => words.map(stem));
const SYNONYMS = new Map<string, string[]>();
for (const group of SYNONYM_GROUPS) for (const word of group) SYNONYMS.set(word, group.filter((w) => w !== word));

/** Other words for a stemmed word (none for most). */
export function synonymsOf(term: string): readonly string[] {
  return SYNONYMS.get(term) ?? [];
}
