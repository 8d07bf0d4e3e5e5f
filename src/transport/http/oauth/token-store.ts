import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomHex, sha256 } from '../../../util/lazy-builtins.js';

/** How the client was registered with the authorization server, in the spec's order of preference. */
export type ClientRegistrationKind = 'preconfigured' | 'metadata-document' | 'dynamic';

/** Token endpoint client authentication this module speaks. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** The client as one authorization server knows it. */
export interface StoredClient {
  kind: ClientRegistrationKind;
  clientId: string;
  clientSecret?: string;
  authMethod: TokenEndpointAuthMethod;
  /** The redirect URIs registered (dynamic registration only), to know when a new one is needed. */
  redirectUris?: string[];
}

/** Tokens one authorization server issued for one resource. */
export interface StoredTokens {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  /** When the access token expires (ms since the epoch); missing when the server did not say. */
  expiresAt?: number;
  /** The scopes granted (space-separated), or requested when the server did not say. */
  scope?: string;
}

/**
 * What is kept for one server: the authorization server (`issuer`) and `resource` the
 * tokens are bound to, the client registration used with that authorization server, and
 * the tokens (missing after a registration whose authorization did not complete).
 */
export interface OAuthRecord {
  version: 1;
  server: string;
  resource: string;
  issuer: string;
  client: StoredClient;
  tokens?: StoredTokens;
  /** The server published no resource metadata (2025-03-26): `issuer` is its origin. */
  legacy?: true;
}

/**
 * Where OAuth records are kept, one per key (see {@link tokenStoreKey}). The default is a
 * {@link FileTokenStore}; a host may give its own (a keychain, a database).
 */
export interface TokenStore {
  get(key: string): Promise<OAuthRecord | undefined>;
  set(key: string, value: OAuthRecord): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * The key of a server's record: its name and the URL it is configured with, so that a
 * name reused for another URL (or another config sharing the state folder) never gets the
 * first server's tokens.
 */
export function tokenStoreKey(server: string, resourceUrl: URL): string {
  return `${server} ${resourceUrl.href}`;
}

/** The authorization context of an access token ('' with none): a hash, never the token. */
export function authorizationContext(accessToken: string | undefined): string {
  return accessToken === undefined ? '' : sha256(accessToken, 'hex').slice(0, 32);
}

/**
 * One JSON file per key in `dir`: the folder is made 0700, each file 0600, written to a
 * temporary file and renamed so a crash never leaves half a token file.
 */
export class FileTokenStore implements TokenStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The file that holds `key`: a readable prefix and a hash, so any key is a safe file name. */
  fileFor(key: string): string {
    const hash = sha256(key, 'hex').slice(0, 32);
    const prefix = key.split(' ')[0].replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 40);
    return join(this.dir, `${prefix}-${hash}.json`);
  }

  async get(key: string): Promise<OAuthRecord | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileFor(key), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const value = JSON.parse(text) as OAuthRecord;
      // A file of another format or version is as good as none: the next login rewrites it.
      return value && value.version === 1 && typeof value.issuer === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: OAuthRecord): Promise<void> {
    await this.ensureDir();
    const file = this.fileFor(key);
    const temp = `${file}.${randomHex(6)}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.fileFor(key), { force: true });
  }

  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // mkdir leaves an existing folder's mode (and applies the umask to a new one).
    await chmod(this.dir, 0o700);
  }
}
