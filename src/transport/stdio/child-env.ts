/**
 * Host variables a server gets without `inheritEnv`: what a program needs to find
 * binaries, a home and a temp folder, and to print text, and nothing that could be a
 * secret. The same list as the MCP SDK's stdio client.
 */
export const SAFE_ENV_KEYS: readonly string[] =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PROCESSOR_ARCHITECTURE',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'PROGRAMFILES',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'TMPDIR'];

/**
 * The environment a server process starts with.
 *
 * @param extra the server's own `env`; it wins over host values.
 * @param inheritEnv pass the whole `host` environment instead of {@link SAFE_ENV_KEYS}. Default false.
 * @param host the environment to take variables from. Default `process.env`.
 */
export function safeEnvironment(
  extra: Record<string, string> = {},
  inheritEnv = false,
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (inheritEnv) {
    for (const [key, value] of Object.entries(host)) if (value !== undefined) env[key] = value;
  } else {
    for (const key of SAFE_ENV_KEYS) {
      const value = host[key];
      // A bash function export (`BASH_FUNC_x%%=() { …`) is code, not a setting.
      if (value === undefined || value.startsWith('()')) continue;
      env[key] = value;
    }
  }
  return Object.assign(env, extra);
}

/**
 * A sandboxed server's environment: the safe allow-list, the host variables its
 * sandbox lists in `env` (never the whole environment), then its own `env`.
 */
export function sandboxEnvironment(spec: { env: Record<string, string>; sandbox?: { env: readonly string[] } }, host: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const key of spec.sandbox?.env ?? []) {
    const value = host[key];
    if (value !== undefined && !value.startsWith('()')) passed[key] = value;
  }
  return safeEnvironment({ ...passed, ...spec.env }, false, host);
}
