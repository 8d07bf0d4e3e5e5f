// Words of names and descriptions for tool search: `readTextFile`, `read_text_file`,
// `read-text-file` and `read.text.file` give the same words, in a plain stemmed form so
// "files" finds "file" and "listing" finds "list".

const STOP_WORDS = new Set(
  'a an and are as at be by can do for from has have how i if in into is it its me my of on or our so that the their them then there these this to use used uses using via was what when which will with you your'.split(
    ' ',
  ),
);

/** Lower-case, stemmed words of a text, stop words left out. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  // Split camelCase (`HTTPServer` → `HTTP Server`, but `URLs` stays one word) before the separators.
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)(?=[A-Z][a-z]{2})/g, '$1 ');
  for (const raw of spaced.toLowerCase().split(/[^a-z0-9]+/)) {
    if (raw === '' || STOP_WORDS.has(raw)) continue;
    out.push(stem(raw));
  }
  return out;
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
