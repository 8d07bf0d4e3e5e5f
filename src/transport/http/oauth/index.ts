export { createOAuthProvider } from './oauth-provider.js';
export type { Authorize, LoginOptions, OAuthProvider, OAuthProviderOptions } from './provider-types.js';
export { oauthConfigProblem } from './client-registration.js';
export type { OAuthConfig } from './client-registration.js';
export { FileTokenStore, tokenStoreKey } from './token-store.js';
export type { ClientRegistrationKind, OAuthRecord, StoredClient, StoredTokens, TokenEndpointAuthMethod, TokenStore } from './token-store.js';
export { loopbackAuthorize, loopbackRedirectUri } from './loopback-authorize.js';
export type { LoopbackAuthorizeOptions } from './loopback-authorize.js';
