import { McpError } from '../../errors.js';

/** Hides an instance's credential values in text it reports (stderr lines, log data, error messages). */
export type Redactor = (text: string) => string;

/** Values this short would hide ordinary words: they are left as they are. */
const SHORTEST_HIDDEN = 4;

/** A redactor for `values`: each occurrence becomes `***`, longest first so a value inside another goes too. */
export function redactorOf(values: Record<string, string>): Redactor {
  const secrets = [...new Set(Object.values(values))].filter((v) => v.length >= SHORTEST_HIDDEN).sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('***');
    return out;
  };
}

/** Log data with its strings redacted, deeply; anything else as it is. */
export function redactData(data: unknown, redact: Redactor, depth = 0): unknown {
  if (typeof data === 'string') return redact(data);
  if (depth > 20 || typeof data !== 'object' || data === null) return data;
  if (Array.isArray(data)) return data.map((item) => redactData(item, redact, depth + 1));
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, redactData(v, redact, depth + 1)]));
}

/** An error with the credential values out of its message, stderr tail, JSON-RPC message and causes. */
export function redactError(error: unknown, redact: Redactor, depth = 0): unknown {
  if (!(error instanceof Error) || depth > 5) return error;
  const cause = (error as { cause?: unknown }).cause === undefined ? undefined : redactError((error as { cause?: unknown }).cause, redact, depth + 1);
  if (!(error instanceof McpError)) {
    const message = redact(error.message);
    if (message === error.message && cause === (error as { cause?: unknown }).cause) return error;
    return new Error(message, cause === undefined ? undefined : { cause });
  }
  const message = redact(error.message);
  const stderrTail = error.stderrTail?.map(redact);
  const rpc = error.rpc && { ...error.rpc, message: redact(error.rpc.message), ...(error.rpc.data === undefined ? {} : { data: redactData(error.rpc.data, redact) }) };
  const changed =
    message !== error.message ||
    cause !== (error as { cause?: unknown }).cause ||
    stderrTail?.some((line, i) => line !== error.stderrTail?.[i]) ||
    (rpc && (rpc.message !== error.rpc?.message || JSON.stringify(rpc.data) !== JSON.stringify(error.rpc?.data)));
  if (!changed) return error;
  const copy = new McpError(error.code, message, {
    ...(error.server === undefined ? {} : { server: error.server }),
    ...(error.phase === undefined ? {} : { phase: error.phase }),
    ...(error.exitCode === undefined ? {} : { exitCode: error.exitCode }),
    ...(error.signal === undefined ? {} : { signal: error.signal }),
    ...(stderrTail === undefined ? {} : { stderrTail }),
    ...(rpc === undefined ? {} : { rpc }),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(cause === undefined ? {} : { cause }),
  });
  return copy;
}
