/** ANSI styles, or identity functions when colour is off. */
export interface Colours {
  bold: (text: string) => string;
  red: (text: string) => string;
  yellow: (text: string) => string;
}

const style = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

export const plain: Colours = { bold: (t) => t, red: (t) => t, yellow: (t) => t };
const ansi: Colours = { bold: style(1, 22), red: style(31, 39), yellow: style(33, 39) };

/**
 * Colour for a stream: `FORCE_COLOR` (other than `0`) turns it on and wins, as in Node
 * itself; else `NO_COLOR` (non-empty, no-color.org) or `TERM=dumb` turns it off; else it
 * is on for a terminal only.
 */
export function wantsColour(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

export function coloursFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): Colours {
  return wantsColour(stream, env) ? ansi : plain;
}
