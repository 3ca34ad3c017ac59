// The HTTP plumbing every route shares: reading a JSON body, sending an answer, the status of a
// coded error, and the signal that tells a route its client went away.
import { isUtf8 } from 'node:buffer';
import { setMaxListeners } from 'node:events';
import type * as http from 'node:http';
import { CorlError, type ErrorCode } from '../errors';

const STATUS: Partial<Record<ErrorCode, number>> = {
  CORL_ERR_SERVE_BAD_JSON: 400,
  CORL_ERR_SERVE_BAD_REQUEST: 400,
  CORL_ERR_SERVE_MALFORMED: 400,
  CORL_ERR_SERVE_CLIENT_TIMEOUT: 408,
  CORL_ERR_SERVE_HEADERS_TOO_LARGE: 431,
  CORL_ERR_SERVE_UNAUTHORIZED: 401,
  CORL_ERR_SERVE_FORBIDDEN: 403,
  CORL_ERR_SERVE_NOT_FOUND: 404,
  CORL_ERR_SERVE_CONFLICT: 409,
  CORL_ERR_SERVE_STEP_EXPIRED: 410,
  CORL_ERR_SERVE_TOO_LARGE: 413,
  CORL_ERR_SERVE_LIMIT: 413,
  CORL_ERR_SERVE_STEP_AHEAD: 422,
  CORL_ERR_SERVE_STEP_FULL: 422,
  CORL_ERR_SERVE_KEYS_FULL: 422,
  CORL_ERR_SERVE_UNKNOWN_AGENT: 422,
  CORL_ERR_SERVE_GROUP_SIZE: 422,
  CORL_ERR_REWARD_FAILED: 500,
  CORL_ERR_REWARD_OUTPUT: 500,
  CORL_ERR_SERVE_INTERNAL: 500,
  CORL_ERR_SERVE_UNAVAILABLE: 503,
  CORL_ERR_SERVE_BUSY: 503,
  CORL_ERR_SERVE_CANCELLED: 499,
  CORL_ERR_SERVE_WORK_TIMEOUT: 503,
  CORL_ERR_SERVE_PEER_TIMEOUT: 504,
};

/** The HTTP status a coded error is answered with. */
export function statusOf(e: CorlError): number {
  if (e.code === 'CORL_ERR_SERVE_NOT_FOUND' && e.data?.method) return 405;
  return STATUS[e.code] ?? 500;
}

/** Marks a server that is stopping, so answers close their connections. */
export const STOPPING = Symbol('corl.serve.stopping');

/** A signal aborted (with CORL_ERR_SERVE_CANCELLED) when the response closes before it was sent in full. */
export function goneSignal(res: http.ServerResponse): AbortSignal {
  const ctrl = new AbortController();
  setMaxListeners(0, ctrl.signal); // each group and phase of the request listens
  res.once('close', () => {
    if (!res.writableFinished)
      ctrl.abort(
        new CorlError(
          'CORL_ERR_SERVE_CANCELLED',
          'expected the client to wait for its answer, got a closed connection',
        ),
      );
  });
  return ctrl.signal;
}

/** The JSON body of a coded error answer. */
export function errorJson(e: CorlError): { error: { code: string; message: string; where?: string; hint?: string } } {
  return { error: { code: e.code, message: e.message, where: e.where, hint: e.hint } };
}

/** Answer with a JSON value. */
export function send(res: http.ServerResponse, status: number, value: unknown): void {
  sendText(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

/** Answer with a text of the given content type (closing the connection when the server stops). */
export function sendText(res: http.ServerResponse, status: number, text: string, type: string): void {
  const closing = (res.req.socket as unknown as { server?: Record<symbol, unknown> }).server?.[STOPPING] === true;
  // The text goes to the socket as is (encoded once there, not copied into a Buffer first).
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    ...(closing ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/** The request's body as JSON: at most `limit` bytes, UTF-8, else a coded 413 or 400. */
export function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const tooLarge = (n: number | string): CorlError =>
      new CorlError('CORL_ERR_SERVE_TOO_LARGE', `expected a body of at most ${limit} bytes, got ${n}`, {
        where: 'body',
      });
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return reject(tooLarge(declared));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(`more than ${limit}`));
        return;
      }
      chunks.push(c);
    });
    req.on('error', (e) => {
      if (!failed) {
        failed = true;
        reject(
          new CorlError('CORL_ERR_SERVE_BAD_REQUEST', `expected a complete request body, got ${e.message}`, {
            where: 'body',
          }),
        );
      }
    });
    req.on('end', () => {
      if (failed) return;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      // Invalid bytes would each decode to U+FFFD: two different ids or answers would become one.
      if (!isUtf8(bytes)) {
        reject(
          new CorlError('CORL_ERR_SERVE_BAD_JSON', 'expected a JSON body in UTF-8, got bytes that are not UTF-8', {
            where: 'body',
          }),
        );
        return;
      }
      const text = bytes.toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch (e) {
        reject(
          new CorlError(
            'CORL_ERR_SERVE_BAD_JSON',
            `expected a JSON body, got ${text.length === 0 ? 'an empty body' : (e as Error).message}`,
            { where: 'body' },
          ),
        );
      }
    });
  });
}
