/** `${VAR}`, `${VAR:-default}`, VS Code's `${env:VAR}`, `${workspaceFolder}` and `${input:id}`. */
const VARIABLE = /\$\{(?:(input):([^}]*)|(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?)\}/g;

/** Why a value cannot be expanded: the message goes after the field's name. */
export class ExpansionError extends Error {}

/** Thrown by {@link expandVars} for a variable that is unset and has no default. */
export class UnsetVariableError extends ExpansionError {
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is not set and has no default`);
  }
}

/** Thrown for `${input:id}`: VS Code prompts the user for it; a runtime cannot, and the literal must never reach a server. */
export class UnpromptableInputError extends ExpansionError {
  constructor(
    readonly input: string,
    value: string,
    description: string | undefined,
  ) {
    const what = description ? ` ("${description}")` : '';
    super(`asks VS Code to prompt for input "${input}"${what}, which lazy-mcp cannot do; set an environment variable and write \${env:NAME} instead, got ${JSON.stringify(value)}`);
  }
}

/** What else a value may refer to besides the host's environment. */
export interface ExpansionContext {
  /** `${workspaceFolder}`; unknown for a config given as an object or text. */
  workspaceFolder?: string;
  /** VS Code's `inputs` by id, with their descriptions, for a clearer message. */
  inputs?: ReadonlyMap<string, string | undefined>;
}

/**
 * Expands variables from `env` (the host's environment). An empty value counts as unset
 * for `:-`, as in the shell.
 */
export function expandVars(value: string, env: Record<string, string | undefined>, context: ExpansionContext = {}): string {
  return value.replace(VARIABLE, (_match, input: string | undefined, inputId: string, name: string, fallback: string | undefined) => {
    if (input !== undefined) throw new UnpromptableInputError(inputId, value, context.inputs?.get(inputId));
    if (name === 'workspaceFolder' && context.workspaceFolder !== undefined) return context.workspaceFolder;
    const found = env[name];
    if (found !== undefined && (found !== '' || fallback === undefined)) return found;
    if (fallback !== undefined) return fallback;
    if (name === 'workspaceFolder') throw new ExpansionError(`uses \${workspaceFolder}, which is known only for a config read from a file, got ${JSON.stringify(value)}`);
    throw new UnsetVariableError(name);
  });
}

/** VS Code's `"inputs": [{ "id", "description", … }]` as a map of id to description; anything else is ignored. */
export function inputsOf(document: unknown): Map<string, string | undefined> {
  const inputs = new Map<string, string | undefined>();
  const list = typeof document === 'object' && document !== null ? (document as { inputs?: unknown }).inputs : undefined;
  if (!Array.isArray(list)) return inputs;
  for (const item of list) {
    if (typeof item !== 'object' || item === null) continue;
    const { id, description } = item as { id?: unknown; description?: unknown };
    if (typeof id === 'string') inputs.set(id, typeof description === 'string' ? description : undefined);
  }
  return inputs;
}
