import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import type * as Jsonc from 'jsonc-parser';
import type { Node, ParseError } from 'jsonc-parser';
import { McpError } from '../../errors.js';
import { fs } from '../../util/lazy-builtins.js';

/** What `${…}` expansion may know about where a config came from. */
export interface ConfigSource {
  /** VS Code's `${workspaceFolder}`: the folder holding `.vscode/`, else the config file's folder. */
  workspaceFolder?: string;
}

/** A config file as read from disk: its document and where it lives. */
export interface ConfigFile {
  path: string;
  /** The file's text as read, so a watcher can tell a real change. */
  text: string;
  document: unknown;
  source: ConfigSource;
}

/** Human names for jsonc-parser's error codes ("CommaExpected" → "a comma expected"). */
const PROBLEMS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'property name expected',
  ValueExpected: 'value expected',
  ColonExpected: 'colon expected',
  CommaExpected: 'comma expected',
  CloseBraceExpected: 'closing brace expected',
  CloseBracketExpected: 'closing bracket expected',
  EndOfFileExpected: 'end of file expected',
  InvalidCommentToken: 'invalid comment',
  UnexpectedEndOfComment: 'unterminated comment',
  UnexpectedEndOfString: 'unterminated string',
  UnexpectedEndOfNumber: 'unterminated number',
  InvalidUnicode: 'invalid unicode escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character',
};

/**
 * Parses config text as JSON with comments and trailing commas (what VS Code and Cursor
 * write; plain JSON is a subset). A syntax error throws `invalid-config` naming the line
 * and column (both 1-based) of the first problem.
 */
export function parseConfigText(text: string): unknown {
  // A byte-order mark is legal in a file but not in JSON.
  const body = text.replace(/^\uFEFF/, '');
  // Most configs are plain JSON, which JSON.parse reads as the tree below would (keys such
  // as `__proto__` stay own keys, a repeated key's last value wins) without loading the
  // JSONC parser; comments, trailing commas and errors go to it.
  try {
    return JSON.parse(body);
  } catch {
    // not plain JSON
  }
  const { parseTree, printParseErrorCode } = jsonc();
  const errors: ParseError[] = [];
  const tree = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  const first = errors[0];
  if (first === undefined && tree !== undefined) return valueOf(tree);
  const { line, column } = lineAndColumn(body, first?.offset ?? 0);
  const code = first === undefined ? 'ValueExpected' : printParseErrorCode(first.error);
  throw new McpError('invalid-config', `config is not valid JSON: ${PROBLEMS[code] ?? code} at line ${line}, column ${column}`, { phase: 'config' });
}

let parser: typeof Jsonc | undefined;

/** jsonc-parser, loaded (synchronously: a config is read synchronously) the first time a config is not plain JSON. */
function jsonc(): typeof Jsonc {
  return (parser ??= createRequire(import.meta.url)('jsonc-parser') as typeof Jsonc);
}

/**
 * A parsed node as a plain value. Keys are defined, not assigned, so that a key such as
 * `__proto__` stays an ordinary key, as with `JSON.parse`.
 */
function valueOf(node: Node): unknown {
  if (node.type === 'array') return (node.children ?? []).map(valueOf);
  if (node.type !== 'object') return node.value;
  const out: Record<string, unknown> = {};
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key === undefined || value === undefined) continue;
    Object.defineProperty(out, String(key.value), { value: valueOf(value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** 1-based line and column of a character offset; a CRLF counts as one line break. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lines = before.split(/\r\n|\r|\n/);
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/**
 * Reads and parses one config file. Errors (unreadable, not JSON) throw `invalid-config`
 * with the path in front.
 */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    throw new McpError('invalid-config', `cannot read config file ${path}: ${(error as Error).message}`, { phase: 'config', cause: error });
  }
  try {
    return { path, text, document: parseConfigText(text), source: { workspaceFolder: workspaceFolderOf(path) } };
  } catch (error) {
    if (error instanceof McpError) throw new McpError(error.code, `${path}: ${error.message}`, { phase: 'config' });
    throw error;
  }
}

/** The folder VS Code would call the workspace for a config file at `path`. */
export function workspaceFolderOf(path: string): string {
  const folder = dirname(path);
  return basename(folder) === '.vscode' ? dirname(folder) : folder;
}

/** A config error, named after the file it is in. */
export function inFile(path: string, error: unknown): unknown {
  if (!(error instanceof McpError) || error.code !== 'invalid-config') return error;
  return new McpError(error.code, `${path}: ${error.message}`, { phase: 'config', cause: error.cause });
}
