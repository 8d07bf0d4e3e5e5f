/**
 * What a sandboxed server may see, with every path already absolute (`~` and
 * `${workspaceFolder}` expanded by the config). Everything else is hidden: the
 * system is read-only, /tmp and the home folder are private and empty, the network
 * is off unless allowed.
 */
export interface SandboxPolicy {
  /** Folders or files the server may read (besides the system and its own package). */
  read: readonly string[];
  /** Folders or files the server may read and write. */
  write: readonly string[];
  /** Whether the server may use the network. Default false. */
  network: boolean;
  /** Host variables passed in besides the safe allow-list and the entry's own `env`. */
  env: readonly string[];
}

/** A sandbox as the API takes it: `true` for the defaults, or the fields to change. */
export type SandboxOptions = boolean | Partial<SandboxPolicy>;

/** `sandbox: true`: nothing but the system and the server's own package. */
export const DEFAULT_SANDBOX: SandboxPolicy = Object.freeze({ read: [], write: [], network: false, env: [] });

/** What `status()` shows for a sandboxed server. */
export interface SandboxStatus extends SandboxPolicy {
  /** `bwrap` (Linux) or `sandbox-exec` (macOS). */
  tool: 'bwrap' | 'sandbox-exec';
}
