// Words of names and descriptions for tool search (ASCII letters and digits; other characters separate words): `readTextFile`, `read_text_file`,
// `read-text-file` and `read.text.file` give the same words, in a plain stemmed form so
// "files" finds "file" and "listing" finds "list".

const STOP_WORDS = new Set(
  ('a about am an and any are as at be been being by can could did do does for from had has have he her here his how i if in into is it its just ' +
    'let me my of on or our please she should so some that the their them then there these they this those to us use used uses using via was we ' +
    'were what when where which who will with would you your').split(' '),
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
      // A lone letter is a contraction's tail (`what's`) or a variable name: it says nothing of a tool.
      if (!STOP_WORDS.has(lower) && (lower.length > 1 || isDigit(lower))) out.push(stem(lower));
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

function isDigit(word: string): boolean {
  const c = word.charCodeAt(0);
  return c >= 48 && c <= 57;
}

function isLower(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 97 && c <= 122;
}

/** A deliberately small suffix stripper: enough to join plural, -ing, -ed and -ion forms of one word. */
export function stem(word: string): string {
  const stripped = stripSuffix(word);
  // `create`, `creates` and `created` all become `creat`.
  return stripped.length > 4 && stripped.endsWith('e') ? stripped.slice(0, -1) : stripped;
}

function stripSuffix(word: string): string {
  if (word.length <= 3 || /^\d+$/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  // The plural first, then the rest: `siblings` and `sibling` meet, as do `relationships` and `relation`.
  let w = word;
  if (w.endsWith('sses') || /(ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  // A vowel must be left: `string` is not `str`.
  if (w.endsWith('ing') && w.length > 5 && /[aeiouy]/.test(w.slice(0, -3))) return undouble(w.slice(0, -3));
  if (w.endsWith('ed') && w.length > 4) return undouble(w.slice(0, -2));
  // `creation` and `create`, `deletion` and `delete`, `compression` and `compress` meet.
  if (w.endsWith('ion') && w.length > 6) return w.slice(0, -3);
  // `relationship` and `relation`, `membership` and `member`.
  if (w.endsWith('ship') && w.length > 7) return stripSuffix(w.slice(0, -4));
  return w;
}

/** `listing` → `list`, `running` → `run`, `created` → `creat` (both sides get the same stem). */
function undouble(word: string): string {
  return word.length > 2 && word[word.length - 1] === word[word.length - 2] && !/[lsz]/.test(word[word.length - 1]) ? word.slice(0, -1) : word;
}
