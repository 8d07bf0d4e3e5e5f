/**
 * The config fields of servers that run one instance per principal or per session:
 * `${principal:NAME}` placeholders (in `env`, `args`, `headers`, `url`), `perPrincipal`,
 * `instances` and `maxInstances`. Host variables are expanded first; a
 * placeholder survives that expansion untouched and is filled per instance.
 */

/** Who an entry's instances are for. */
export type InstanceMode = 'per-principal' | 'per-session';

/** How an instanced entry runs, after validation. */
export interface InstanceSpec {
  mode: InstanceMode;
  /** The principal's credentials the entry refers to (`${principal:NAME}`), sorted. */
  names: string[];
  /** Most instances of this server alive at once; the least recently used is stopped first. */
  maxInstances: number;
  /** The credentials used in header values (where a line break is refused). */
  headerNames?: string[];
  /** Remote entries: the URL with its host variables expanded and its placeholders still in it. */
  url?: string;
}

/** An idle instance is stopped after this long unless the entry's `idleTimeout` says otherwise (ms). */
export const DEFAULT_INSTANCE_IDLE_MS = 5 * 60_000;
/** Instances of one server alive at once unless `maxInstances` says otherwise. */
export const DEFAULT_MAX_INSTANCES = 32;

/** Any `${principal:…}`, well formed or not, so a typo is reported rather than sent. */
const PLACEHOLDER = /\$\{principal:([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A field and what is wrong with it, for the config's message. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The fields a placeholder may appear in, as the entry gives them (host variables expanded). */
export interface PlaceholderFields {
  env?: Record<string, string>;
  args?: string[];
  headers?: Record<string, string>;
  url?: string;
  /** Fields where a placeholder is refused: `command`, `cwd`. */
  refused?: Record<string, string | undefined>;
}

/** The credential names `value` refers to; throws a problem for a malformed placeholder. */
export function placeholdersIn(field: string, value: string): string[] {
  // Nearly every value holds none: they skip the regex's match objects (a fresh process
  // constructing hundreds of servers pays for each allocation in scavenges).
  if (!mayHold(value)) return [];
  const names: string[] = [];
  for (const match of value.matchAll(PLACEHOLDER)) {
    const name = match[1] as string;
    if (!NAME.test(name)) throw problem(field, `has \${principal:${name}}, which must name a credential (letters, digits and _, not starting with a digit)`);
    names.push(name);
  }
  return names;
}

/**
 * The entry's instance spec, undefined for an ordinary shared server. Throws a
 * {@link FieldProblem} naming the field and the value.
 */
export function instanceSpec(entry: Record<string, unknown>, fields: PlaceholderFields): InstanceSpec | undefined {
  if (entry.perPrincipal === undefined && entry.instances === undefined && entry.maxInstances === undefined && !holdsPlaceholder(fields)) return undefined;
  const names = new Set<string>();
  const add = (field: string, value: string) => placeholdersIn(field, value).forEach((n) => names.add(n));
  for (const [key, value] of Object.entries(fields.env ?? {})) add(`env.${key}`, value);
  (fields.args ?? []).forEach((arg, i) => add(`args[${i}]`, arg));
  const headerNames = new Set<string>();
  for (const [key, value] of Object.entries(fields.headers ?? {})) {
    add(`headers.${key}`, value);
    placeholdersIn(`headers.${key}`, value).forEach((n) => headerNames.add(n));
  }
  if (fields.url !== undefined) add('url', fields.url);
  for (const [field, value] of Object.entries(fields.refused ?? {})) {
    if (value !== undefined && placeholdersIn(field, value).length > 0) throw problem(field, `cannot hold a \${principal:…} value (only env, args, headers and url can), got ${describe(value)}`);
  }
  const perPrincipal = entry.perPrincipal;
  if (perPrincipal !== undefined && typeof perPrincipal !== 'boolean') throw problem('perPrincipal', `must be a boolean, got ${describe(perPrincipal)}`);
  const instances = entry.instances;
  if (instances !== undefined && instances !== 'shared' && instances !== 'per-principal' && instances !== 'per-session') {
    throw problem('instances', `must be "shared", "per-principal" or "per-session", got ${describe(instances)}`);
  }
  if (instances === 'shared' && (perPrincipal === true || names.size > 0)) {
    throw problem('instances', `is "shared", but the entry ${perPrincipal === true ? 'sets "perPrincipal": true' : `uses \${principal:${[...names][0]}}`}, which needs an instance per principal`);
  }
  if (instances === 'per-session' && perPrincipal === true) throw problem('perPrincipal', 'cannot be true with "instances": "per-session" (choose one)');
  const mode: InstanceMode | undefined =
    instances === 'per-session' ? 'per-session' : instances === 'per-principal' || perPrincipal === true || names.size > 0 ? 'per-principal' : undefined;
  const maxInstances = entry.maxInstances;
  if (mode === undefined) {
    if (maxInstances !== undefined) throw problem('maxInstances', `applies only to a server with instances per principal or per session, got ${describe(maxInstances)}`);
    return undefined;
  }
  if (maxInstances !== undefined && !(Number.isSafeInteger(maxInstances) && (maxInstances as number) > 0)) {
    throw problem('maxInstances', `must be a positive whole number, got ${describe(maxInstances)}`);
  }
  return {
    mode,
    names: [...names].sort(),
    maxInstances: (maxInstances as number | undefined) ?? DEFAULT_MAX_INSTANCES,
    ...(headerNames.size > 0 ? { headerNames: [...headerNames].sort() } : {}),
    ...(fields.url !== undefined && names.size > 0 ? { url: fields.url } : {}),
  };
}

/**
 * Whether any field may hold a placeholder: the ordinary entry's answer, found without the
 * iterators and sets of the full check (which a fresh process runs in the interpreter, for
 * every configured server).
 */
function holdsPlaceholder(fields: PlaceholderFields): boolean {
  for (const key in fields.env) if (mayHold(fields.env[key])) return true;
  for (const key in fields.headers) if (mayHold(fields.headers[key])) return true;
  for (const key in fields.refused) if (mayHold(fields.refused[key])) return true;
  return mayHold(fields.url) || (fields.args ?? []).some(mayHold);
}

/** Whether `value` may hold a placeholder: the cheap test before the regex. */
const mayHold = (value: string | undefined): boolean => value !== undefined && value.includes('${principal:');

/** `value` with each placeholder replaced by `fill(name)`. */
export function fillPlaceholders(value: string, fill: (name: string) => string): string {
  return value.replace(PLACEHOLDER, (_m, name: string) => fill(name));
}

/** A stdio entry's config for one instance: its `env` values and `args` with the principal's credentials filled in. */
export function fillStdioConfig<C extends { env?: Readonly<Record<string, string>>; args?: readonly string[] }>(config: C, values: Record<string, string>): C {
  const fill = (text: string) => fillPlaceholders(text, (name) => values[name] ?? '');
  return { ...config, env: Object.fromEntries(Object.entries(config.env ?? {}).map(([k, v]) => [k, fill(v)])), args: (config.args ?? []).map(fill) };
}

function problem(field: string, message: string): FieldProblem {
  return { field, message };
}

export function isFieldProblem(value: unknown): value is FieldProblem {
  return typeof value === 'object' && value !== null && typeof (value as FieldProblem).field === 'string' && typeof (value as FieldProblem).message === 'string' && !(value instanceof Error);
}

function describe(value: unknown): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const shown = JSON.stringify(value);
  return `${shown === undefined ? String(value) : shown.length > 60 ? `${shown.slice(0, 60)}…` : shown} (${type})`;
}
