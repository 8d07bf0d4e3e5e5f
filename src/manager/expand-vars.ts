/** `${VAR}`, `${VAR:-default}`, and VS Code's `${env:VAR}`. */
const VARIABLE = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Thrown by {@link expandVars} for a variable that is unset and has no default. */
export class UnsetVariableError extends Error {
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is not set and has no default`);
  }
}

/**
 * Expands variables from `env` (the host's environment). An empty value counts as unset
 * for `:-`, as in the shell.
 */
export function expandVars(value: string, env: Record<string, string | undefined>): string {
  return value.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && (found !== '' || fallback === undefined)) return found;
    if (fallback !== undefined) return fallback;
    throw new UnsetVariableError(name);
  });
}
