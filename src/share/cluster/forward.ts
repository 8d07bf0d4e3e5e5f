import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { SERVER_ERROR } from '../../transport/mcp-constants.js';
import type { Member } from './membership.js';

/** Headers a hop must not pass on (RFC 9110 §7.6.1), and the Host, which is the next hop's. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

/**
 * Passes a client's request on to the member that holds its session or round, as it came
 * (the client's own bearer token included: every gateway of a cluster takes the same), and
 * streams the answer back (SSE included). `body`: already read by the caller.
 */
export function forwardRequest(member: Member, req: IncomingMessage, res: ServerResponse, body: string | undefined, onFailed: (error: Error) => void): Promise<void> {
  return new Promise((resolve) => {
    const target = new URL(req.url ?? '/', member.url);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    headers['x-lazy-mcp-forwarded'] = '1';
    if (body !== undefined) {
      delete headers['content-length'];
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send(target, { method: req.method, headers }, (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
      res.writeHead(answer.statusCode ?? 502, back);
      res.flushHeaders();
      answer.pipe(res);
      answer.on('end', resolve);
      answer.on('error', () => (res.end(), resolve()));
    });
    upstream.on('error', (error) => {
      onFailed(error);
      if (!res.headersSent) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: SERVER_ERROR, message: `the cluster member that holds this session (${member.url}) cannot be reached (${error.message}); start a new session` } }),
        );
      } else res.end();
      resolve();
    });
    // The client going away ends the hop too (a GET stream it closed, a cancelled request).
    res.on('close', () => upstream.destroy());
    if (body !== undefined) upstream.end(body);
    else req.pipe(upstream);
  });
}
