import { UsageError } from './args.js';
import { closest, didYouMean } from './suggest.js';

/** A tool's input schema, as far as the command line needs it. */
interface ObjectSchema {
  properties?: Record<string, { type?: string | string[] } | boolean>;
  required?: string[];
  additionalProperties?: unknown;
}

/**
 * `key=value` pairs as a tool's arguments, each value read as the type its schema
 * property declares: numbers and booleans as such, arrays and objects as JSON, strings
 * as given. A key the schema does not know is a usage error when the schema allows no
 * others (with close names suggested); otherwise its value is JSON if it parses, else text.
 */
export function pairsToArguments(pairs: readonly string[], schema: unknown, tool: string): Record<string, unknown> {
  const { properties = {}, additionalProperties } = (typeof schema === 'object' && schema !== null ? schema : {}) as ObjectSchema;
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`tool arguments must be a JSON object or key=value pairs, got ${JSON.stringify(pair)}`);
    const key = pair.slice(0, at);
    const text = pair.slice(at + 1);
    if (Object.hasOwn(args, key)) throw new UsageError(`argument ${JSON.stringify(key)} is given twice`);
    const property = properties[key];
    if (property === undefined) {
      if (additionalProperties === false) {
        const names = Object.keys(properties);
        throw new UsageError(`${tool} has no argument ${JSON.stringify(key)}${didYouMean(closest(key, names)) || (names.length ? `; its arguments are ${names.join(', ')}` : '; it takes no arguments')}`);
      }
      args[key] = jsonOr(text);
      continue;
    }
    const declared = typeof property === 'object' ? property.type : undefined;
    args[key] = coerce(key, text, declared === undefined ? [] : Array.isArray(declared) ? declared : [declared]);
  }
  return args;
}

function coerce(key: string, text: string, types: readonly string[]): unknown {
  if (types.length === 0) return jsonOr(text);
  // A value that reads as one of the declared non-string types is that; else a string if allowed.
  for (const type of types) {
    if ((type === 'number' || type === 'integer') && text.trim() !== '' && Number.isFinite(Number(text)) && (type === 'number' || Number.isInteger(Number(text)))) return Number(text);
    if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
    if (type === 'null' && text === 'null') return null;
    if (type === 'array' || type === 'object') {
      const value = jsonOr(text);
      if (type === 'array' ? Array.isArray(value) : typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
    }
  }
  if (types.includes('string')) return text;
  throw new UsageError(`argument ${JSON.stringify(key)} must be ${types.map(describeType).join(' or ')}, got ${JSON.stringify(text)}`);
}

function describeType(type: string): string {
  return { integer: 'a whole number', number: 'a number', boolean: 'true or false', array: 'a JSON array', object: 'a JSON object', null: 'null' }[type] ?? type;
}

function jsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
