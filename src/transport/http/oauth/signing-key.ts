import type { webcrypto } from 'node:crypto';
import { nodeCrypto } from '../../../util/lazy-builtins.js';

// The private key of a `private_key_jwt` client (RFC 7523): a PKCS#8 key in PEM from the
// config, checked when the config is read and imported for WebCrypto when it signs.

/** Signing algorithms a `private_key_jwt` key may use, and how WebCrypto imports each. */
const ALGORITHMS: Record<string, webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams | webcrypto.Algorithm> = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  ES384: { name: 'ECDSA', namedCurve: 'P-384' },
  ES512: { name: 'ECDSA', namedCurve: 'P-521' },
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  RS384: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' },
  RS512: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256' },
  PS384: { name: 'RSA-PSS', hash: 'SHA-384' },
  PS512: { name: 'RSA-PSS', hash: 'SHA-512' },
  EdDSA: { name: 'Ed25519' },
};

/** The algorithm a key signs with when none is configured: its curve's ES*, RS256, or EdDSA. */
function defaultAlgorithm(pem: string): string {
  const key = nodeCrypto().createPrivateKey(pem);
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === 'secp384r1' ? 'ES384' : curve === 'secp521r1' ? 'ES512' : 'ES256';
  }
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'rsa-pss') return 'PS256';
  throw new Error(`a ${key.asymmetricKeyType ?? 'unknown'} key cannot sign a client assertion`);
}

/** Why a configured key or algorithm cannot be used, or undefined: for the config reader. */
export function signingKeyProblem(pem: string, algorithm: string | undefined): string | undefined {
  if (algorithm !== undefined && !Object.hasOwn(ALGORITHMS, algorithm)) return `signingAlgorithm must be one of ${Object.keys(ALGORITHMS).join(', ')}, got ${JSON.stringify(algorithm)}`;
  try {
    const key = nodeCrypto().createPrivateKey(pem);
    if (key.type !== 'private') return 'privateKey must be a private key in PEM';
    defaultAlgorithm(pem);
  } catch (error) {
    return `privateKey is not a usable PEM private key (${(error as Error).message})`;
  }
  return undefined;
}

/** The PEM key as a non-extractable WebCrypto signing key for `algorithm` (default: from the key's type). */
export async function importSigningKey(pem: string, algorithm?: string): Promise<webcrypto.CryptoKey> {
  const alg = algorithm ?? defaultAlgorithm(pem);
  const params = ALGORITHMS[alg];
  if (params === undefined) throw new Error(`unsupported signing algorithm ${JSON.stringify(alg)}`);
  const der = nodeCrypto().createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });
  return (await nodeCrypto().webcrypto.subtle.importKey('pkcs8', der, params, false, ['sign']));
}
