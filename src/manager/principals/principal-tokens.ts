import type { OAuthRecord, TokenStore } from '../../transport/http/oauth/token-store.js';
import { sha256 } from '../../util/lazy-builtins.js';

/**
 * One principal's view of the pool's token store: the same store, each key prefixed with a
 * digest of the principal's id, so a principal's tokens are found only for that principal
 * (and a file store's names never carry the id itself).
 */
export class PrincipalTokenStore implements TokenStore {
  private readonly prefix: string;

  constructor(
    private readonly store: TokenStore,
    principal: string,
  ) {
    this.prefix = `principal:${sha256(principal, 'base64url').slice(0, 32)} `;
  }

  get(key: string): Promise<OAuthRecord | undefined> {
    return this.store.get(this.prefix + key);
  }

  set(key: string, value: OAuthRecord): Promise<void> {
    return this.store.set(this.prefix + key, value);
  }

  delete(key: string): Promise<void> {
    return this.store.delete(this.prefix + key);
  }
}
