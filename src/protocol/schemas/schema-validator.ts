import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../engine/json-depth.js';

/** One way a value fails a schema: where (`a.b[0]`, '' for the whole value) and what is wrong. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** A schema compiled once; `check` answers the first few issues, or an empty list when the value fits. */
export interface CompiledSchema {
  check(value: unknown): readonly SchemaIssue[];
}

/** Schemas we refuse to compile: larger or deeper ones are passed through unchecked rather than risk the event loop. */
const MAX_SCHEMA_CHARS = 1 << 20;
const MAX_SCHEMA_DEPTH = 64;
const MAX_ISSUES = 5;
/** The context of a top-level validation, shared by every call of a schema without dynamic anchors. */
const VALIDATION_CONTEXT = { instancePath: '', parentData: undefined, parentDataProperty: undefined, rootData: undefined, dynamicAnchors: {} } as unknown as Parameters<ValidateFunction>[1];
/** What `check` answers for a value that fits: one frozen list, not a new one per call. */
const NO_ISSUES: readonly SchemaIssue[] = Object.freeze([]);

const base: Options = {
  // Servers' schemas are often slightly off; an odd keyword must not stop a call.
  strict: false,
  validateSchema: false,
  // `format` is an annotation by default in 2020-12, and we ship no format vocabulary.
  validateFormats: false,
  // Two servers may use one `$id`; each compiled schema stays on its own.
  addUsedSchema: false,
  allErrors: true,
  // Errors carry the offending value, so messages can say what was sent.
  verbose: true,
  logger: false,
  // No `loadSchema`: a `$ref` to anything outside the schema fails compilation and is never fetched.
};

type Dialect = 'draft-07' | '2019-09' | '2020-12';
const engines = new Map<string, InstanceType<typeof Ajv> | InstanceType<typeof Ajv2019> | InstanceType<typeof Ajv2020>>();

// ajv is loaded at the first schema check, not with the package: a gateway answering from
// its cache, a listing or a CLI command that checks nothing never pays for it.
let ajv: { Ajv: typeof Ajv; Ajv2019: typeof Ajv2019; Ajv2020: typeof Ajv2020 } | undefined;
let loading: Promise<void> | undefined;

/** Loads the validator; {@link compileSchema} may be called once this has resolved. */
export function loadValidator(): Promise<void> {
  return (loading ??= Promise.all([import('ajv'), import('ajv/dist/2019.js'), import('ajv/dist/2020.js')]).then(([draft07, draft2019, draft2020]) => {
    ajv = { Ajv: draft07.Ajv, Ajv2019: draft2019.Ajv2019, Ajv2020: draft2020.Ajv2020 };
  }));
}

/** Whether {@link compileSchema} can be called now (else {@link loadValidator} first). */
export function validatorLoaded(): boolean {
  return ajv !== undefined;
}

function engine(dialect: Dialect, useDefaults: boolean) {
  const key = `${dialect}:${useDefaults}`;
  let compiler = engines.get(key);
  if (!compiler) {
    const options = { ...base, useDefaults };
    const loaded = ajv!; // compileSchema checked
    compiler = dialect === 'draft-07' ? new loaded.Ajv(options) : dialect === '2019-09' ? new loaded.Ajv2019(options) : new loaded.Ajv2020(options);
    engines.set(key, compiler);
  }
  return compiler;
}

/** JSON Schema 2020-12 unless `$schema` names draft-07 (or older, read as draft-07) or 2019-09. */
function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft-0[3-7]/.test(declared)) return 'draft-07';
  if (declared.includes('2019-09')) return '2019-09';
  return '2020-12';
}

const compiled = new WeakMap<object, CompiledSchema | null>();
const compiledWithDefaults = new WeakMap<object, CompiledSchema | null>();

/**
 * Compiles `schema` once (cached by identity). Returns undefined for a schema that cannot
 * be checked here — not an object, too large or deep, an unresolvable or remote `$ref` —
 * so the caller passes values through unchecked rather than reject what the server may accept.
 * With `useDefaults`, `check` also fills in the schema's defaults on the value it is given.
 * Only once {@link loadValidator} has resolved.
 */
export function compileSchema(schema: unknown, options?: { useDefaults?: boolean }): CompiledSchema | undefined {
  // A compile failure reads as "cannot be checked here": never let a missing load pass for one.
  if (!ajv) throw new Error('compileSchema before loadValidator() resolved');
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return undefined;
  const useDefaults = options?.useDefaults ?? false;
  const cache = useDefaults ? compiledWithDefaults : compiled;
  const known = cache.get(schema);
  if (known !== undefined) return known ?? undefined;
  const result = compileByText(schema as Record<string, unknown>, useDefaults);
  cache.set(schema, result ?? null);
  return result;
}

/**
 * Compiled schemas by their text, across the process: a re-listing (or another manager)
 * brings equal schemas as new objects, and compiling costs a millisecond or more a tool.
 */
const byText = new Map<string, CompiledSchema | null>();
const MAX_BY_TEXT = 1024;

function compileByText(schema: Record<string, unknown>, useDefaults: boolean): CompiledSchema | undefined {
  if (nestsDeeperThan(schema, MAX_SCHEMA_DEPTH)) return undefined;
  const text = JSON.stringify(schema);
  if (text.length > MAX_SCHEMA_CHARS) return undefined;
  const key = `${useDefaults ? 'd' : 'n'}${text}`;
  let result = byText.get(key);
  if (result === undefined) {
    result = compileUncached(schema, text, useDefaults) ?? null;
    // Oldest first out: a bounded map, however many servers come and go.
    if (byText.size >= MAX_BY_TEXT) byText.delete(byText.keys().next().value as string);
    byText.set(key, result);
  }
  return result ?? undefined;
}

/** `text`: the schema's JSON, as {@link compileByText} made it. */
function compileUncached(schema: Record<string, unknown>, text: string, useDefaults: boolean): CompiledSchema | undefined {
  try {
    const { $schema: _declared, ...body } = schema;
    const validate: ValidateFunction = engine(dialectOf(schema), useDefaults).compile(body);
    // ajv's validate makes its context object per call unless given one; only a dynamic anchor writes to it.
    const context = text.includes('$dynamicAnchor') || text.includes('$recursiveAnchor') ? undefined : VALIDATION_CONTEXT;
    return {
      check(value) {
        // ajv follows a recursive schema as deep as the value goes, on the stack.
        if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return [{ path: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }];
        if (validate(value, context)) return NO_ISSUES;
        return (validate.errors ?? []).slice(0, MAX_ISSUES).map(describe);
      },
    };
  } catch {
    return undefined;
  }
}

/** `/a/0/b` → `a[0].b`. */
function pathOf(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function join(path: string, property: string): string {
  return path === '' ? property : `${path}.${property}`;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function describe(error: ErrorObject): SchemaIssue {
  const path = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: join(path, String(params.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { path: join(path, String(params.additionalProperty)), message: 'is not an accepted property' };
    case 'type':
      return { path, message: `must be ${String(params.type)}, got ${typeName(error.data)}` };
    case 'enum':
      return { path, message: `must be one of ${shown(params.allowedValues)}, got ${shown(error.data)}` };
    case 'const':
      return { path, message: `must be ${shown(params.allowedValue)}, got ${shown(error.data)}` };
    default:
      return { path, message: error.message ?? `fails \`${error.keyword}\`` };
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

/** "`path` is required; `count` must be integer, got string" — one line a model can act on. */
export function issuesText(issues: readonly SchemaIssue[]): string {
  return issues.map((issue) => (issue.path === '' ? `the value ${issue.message}` : `\`${issue.path}\` ${issue.message}`)).join('; ');
}
