// The JSON Schema work every chat-API adapter shares: local `$ref`s inlined (chat APIs
// reject or misread them), cycles cut with a note a model can read, and a walk over every
// subschema for the provider-specific rewrites. Pure functions: inputs are never changed.

import { nestsDeeperThan } from '../protocol/engine/json-depth.js';

export type JsonSchema = Record<string, unknown>;

/** What an adapter changed in a schema, for callers who want to know (and for strictness decisions). */
export interface SchemaReport {
  /** One line per change, e.g. `removed "format" at /properties/when`. */
  notes: string[];
  /** A recursive `$ref` was cut: the cut point accepts any value. */
  cycles: boolean;
  /** A `$ref` that is not local (or points nowhere) was replaced by an unconstrained schema. */
  unresolved: boolean;
}

/** Deepest nesting followed and most nodes produced, so a hostile schema cannot blow the stack or memory. */
const MAX_DEPTH = 48;
const MAX_NODES = 20_000;

export function newReport(): SchemaReport {
  return { notes: [], cycles: false, unresolved: false };
}

export function isSchemaObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The schema with every local `$ref` (`#`, `#/$defs/…`, `#/definitions/…`, any JSON pointer
 * into the document) replaced by what it points at, and `$defs`/`definitions`/`$schema`/
 * `$id`/`$anchor`/`$comment` removed. A `$ref` with sibling keywords keeps the siblings
 * (they win over the target's, as a description should). A reference to a schema already
 * being expanded on the same path is a cycle: it becomes `{}` with a description saying
 * which definition recurses there, so the model knows why that part is open.
 */
export function inlineRefs(root: JsonSchema, report: SchemaReport): JsonSchema {
  let nodes = 0;
  const expand = (node: unknown, path: string, active: readonly string[], depth: number): unknown => {
    if (Array.isArray(node)) return node.map((item, i) => expand(item, `${path}/${i}`, active, depth + 1));
    if (!isSchemaObject(node)) return node;
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) {
      report.cycles = true;
      report.notes.push(`cut the schema at ${path || '/'}: too large or too deep to inline`);
      return { description: 'Not expanded here: the schema is too large or too deep.' };
    }
    let source = node;
    let here = active;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const { $ref: _ref, ...siblings } = node;
      if (active.includes(ref)) {
        report.cycles = true;
        report.notes.push(`cut the recursive reference ${ref} at ${path || '/'}`);
        const note = `Recursive: the same shape as ${refLabel(ref)} (not expanded again here).`;
        return { ...stripMeta(siblings), description: joinText(siblings.description, note) };
      }
      const target = resolvePointer(root, ref);
      if (!isSchemaObject(target)) {
        report.unresolved = true;
        report.notes.push(`replaced the unresolvable reference ${ref} at ${path || '/'} with an open schema`);
        return { ...stripMeta(siblings), description: joinText(siblings.description, `(refers to ${ref}, which is not available)`) };
      }
      report.notes.push(`inlined ${ref} at ${path || '/'}`);
      source = { ...target, ...siblings };
      here = [...active, ref];
    }
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(source)) {
      if (key === '$defs' || key === 'definitions' || key === '$schema' || key === '$id' || key === '$anchor' || key === '$comment' || key === '$ref') continue;
      out[key] = key === 'properties' || key === 'patternProperties' || key === 'dependentSchemas'
        ? mapValues(value, (child, name) => expand(child, `${path}/${key}/${name}`, here, depth + 1))
        : key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'example' || key === 'required'
          ? value
          : expand(value, `${path}/${key}`, here, depth + 1);
      // Values are copied whole; one too deep would overflow whoever serializes the schema.
      if ((key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'example') && nestsDeeperThan(value, MAX_DEPTH)) {
        delete out[key];
        report.notes.push(`removed "${key}" at ${path || '/'}: its value is too deep`);
      }
    }
    return out;
  };
  return expand(root, '', ['#'], 0) as JsonSchema;
}

/**
 * Rebuilds a schema bottom-up: `visit` gets each subschema after its children were rebuilt,
 * with its JSON-pointer path, and returns the replacement. Children are the subschemas
 * under properties, items, prefixItems, additionalProperties, anyOf/oneOf/allOf, not,
 * if/then/else, contains, propertyNames.
 */
export function mapSchema(schema: JsonSchema, visit: (node: JsonSchema, path: string) => JsonSchema, path = ''): JsonSchema {
  const out: JsonSchema = { ...schema };
  for (const key of ['properties', 'patternProperties'] as const) {
    if (isSchemaObject(out[key])) out[key] = mapValues(out[key], (child, name) => (isSchemaObject(child) ? mapSchema(child, visit, `${path}/${key}/${name}`) : child));
  }
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'] as const) {
    if (isSchemaObject(out[key])) out[key] = mapSchema(out[key], visit, `${path}/${key}`);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((child, i) => (isSchemaObject(child) ? mapSchema(child, visit, `${path}/${key}/${i}`) : child));
  }
  if (Array.isArray(out.items)) out.items = (out.items as unknown[]).map((child, i) => (isSchemaObject(child) ? mapSchema(child, visit, `${path}/items/${i}`) : child));
  return visit(out, path);
}

/** The JSON types a schema node allows, from `type` (string or array); empty when unconstrained. */
export function typesOf(node: JsonSchema): string[] {
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  return [];
}

/** Whether a schema node accepts `null` (a `null` type, a nullable flag, a null enum/const or an anyOf branch that does). */
export function acceptsNull(node: JsonSchema): boolean {
  if (typesOf(node).includes('null') || node.nullable === true) return true;
  if (Array.isArray(node.enum)) return node.enum.includes(null);
  if ('const' in node) return node.const === null;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(node[key]) && (node[key] as unknown[]).some((b) => isSchemaObject(b) && acceptsNull(b))) return true;
  }
  return false;
}

/** Appends a sentence to a description, keeping what was there. */
export function joinText(description: unknown, extra: string): string {
  return typeof description === 'string' && description.trim() !== '' ? `${description.trim()} ${extra}` : extra;
}

/** The input schema as an object schema: MCP requires `type: "object"`, but some servers leave it out. */
export function objectRoot(schema: unknown): JsonSchema {
  if (!isSchemaObject(schema)) return { type: 'object', properties: {} };
  return schema.type === undefined ? { type: 'object', ...schema } : schema;
}

function resolvePointer(root: JsonSchema, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchemaObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function refLabel(ref: string): string {
  if (ref === '#') return 'the whole input';
  const last = ref.split('/').pop() ?? ref;
  return JSON.stringify(decodeURIComponent(last));
}

function stripMeta(node: JsonSchema): JsonSchema {
  const { $defs: _d, definitions: _f, ...rest } = node;
  return rest;
}

function mapValues(value: unknown, map: (child: unknown, name: string) => unknown): unknown {
  if (!isSchemaObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, map(child, name)]));
}

/**
 * `allOf` folded into one schema: properties merged (a property in several branches keeps
 * the first definition, noted), `required` the union, other keywords the first given.
 * Meaning is kept except where two branches define one property differently.
 */
export function mergeAllOf(node: JsonSchema, report: SchemaReport, path: string): JsonSchema {
  if (!Array.isArray(node.allOf)) return node;
  const { allOf, ...rest } = node;
  const out: JsonSchema = { ...rest };
  const properties: Record<string, unknown> = isSchemaObject(rest.properties) ? { ...rest.properties } : {};
  const required = new Set<string>(Array.isArray(rest.required) ? (rest.required as string[]) : []);
  for (const branch of allOf as unknown[]) {
    if (!isSchemaObject(branch)) continue;
    const merged = mergeAllOf(branch, report, path);
    for (const [key, value] of Object.entries(merged)) {
      if (key === 'properties' && isSchemaObject(value)) {
        for (const [name, child] of Object.entries(value)) {
          if (name in properties && JSON.stringify(properties[name]) !== JSON.stringify(child)) report.notes.push(`kept the first of two definitions of "${name}" when merging allOf at ${path || '/'}`);
          else properties[name] = child;
        }
      } else if (key === 'required' && Array.isArray(value)) for (const name of value) required.add(String(name));
      else if (key === 'description' && out.description !== undefined) out.description = joinText(out.description, String(value));
      else if (!(key in out)) out[key] = value;
    }
  }
  if (Object.keys(properties).length > 0) out.properties = properties;
  if (required.size > 0) out.required = [...required];
  report.notes.push(`merged allOf at ${path || '/'}`);
  return out;
}

/**
 * A root that is a union of object shapes (`anyOf`/`oneOf` at the top, which some APIs
 * reject) as one object: every branch's properties, required only what every branch
 * requires, and a description listing the alternatives. This widens what is accepted
 * (noted); the arguments are still checked against the original schema before a call.
 */
export function flattenRootUnion(root: JsonSchema, report: SchemaReport): JsonSchema {
  const key = Array.isArray(root.anyOf) ? 'anyOf' : Array.isArray(root.oneOf) ? 'oneOf' : undefined;
  if (!key) return root;
  const { [key]: branches, ...rest } = root;
  const objects = (branches as unknown[]).filter(isSchemaObject);
  const properties: Record<string, unknown> = isSchemaObject(rest.properties) ? { ...rest.properties } : {};
  let required: Set<string> | undefined;
  const alternatives: string[] = [];
  for (const branch of objects) {
    const props = isSchemaObject(branch.properties) ? branch.properties : {};
    for (const [name, child] of Object.entries(props)) if (!(name in properties)) properties[name] = child;
    const mine = new Set(Array.isArray(branch.required) ? (branch.required as string[]) : []);
    required = required ? new Set([...required].filter((n) => mine.has(n))) : mine;
    alternatives.push(Object.keys(props).join(', ') || 'no properties');
  }
  const baseRequired = Array.isArray(rest.required) ? (rest.required as string[]) : [];
  const allRequired = [...new Set([...baseRequired, ...(required ?? [])])];
  report.notes.push(`flattened the top-level ${key} of ${objects.length} shapes into one object`);
  return {
    ...rest,
    type: 'object',
    properties,
    ...(allRequired.length ? { required: allRequired } : {}),
    description: joinText(rest.description, `Give one of these sets of properties: ${alternatives.map((a) => `(${a})`).join(' or ')}.`),
  };
}
