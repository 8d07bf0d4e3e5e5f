/** Longest part of a value a message quotes. */
const QUOTED = 60;

/**
 * A value as every validation message shows it: its JSON (cut), then its type; a URL
 * without its userinfo, which may hold a password. `-1 (number)`, `"x" (string)`.
 */
export function shown(value: unknown): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const safe = typeof value === 'string' ? value.replace(/\/\/[^/@\s]*@/, '//') : value;
  let text: string | undefined;
  try {
    // JSON has no NaN or Infinity (it would write null): those are shown as the numbers they are.
    text = typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(safe);
  } catch {
    // A cycle or a BigInt: its type says enough.
  }
  text ??= typeof value === 'function' ? 'a function' : String(value);
  return `${text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text} (${type})`;
}

/** The one shape of a validation message: "`timeout` must be a non-negative number of milliseconds, got -1 (number)". */
export function mustBe(field: string, expected: string, value: unknown): string {
  return `\`${field}\` must be ${expected}, got ${shown(value)}`;
}
