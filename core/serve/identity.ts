// Who a request comes from (docs/guide/serve.md "Agent identity"): each agent posts with its own
// bearer token, so a client can change only what its own agent posts. A reusable unit: every route
// that posts on an agent's behalf asks `agentOf`.
import { createHash, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import { CorlError } from '../errors';
import { readUserText } from '../util/files';

/** Who sent a request: an agent's token, the service token, or nobody (a service without credentials). */
export type Caller =
  { readonly kind: 'agent'; readonly agent: number } | { readonly kind: 'service' } | { readonly kind: 'open' };

/** How a service authenticates: per-agent tokens, one shared token, or none (loopback only). */
export type AuthMode = 'agents' | 'shared' | 'none';

/** Shortest agent token accepted (a token is a secret: 16 characters is already weak). */
export const MIN_TOKEN_CHARS = 16;

/** A tokens file holds a few short entries: anything larger is not one. */
const MAX_TOKENS_FILE_BYTES = 16 * 1024 * 1024;

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function tokensError(message: string, where: string, hint?: string): CorlError {
  return new CorlError('CORL_ERR_SERVE_TOKENS', message, { where, ...(hint ? { hint } : {}) });
}

/** The credentials of one service: a token per agent (`serve.tokens`), and an optional service token. */
export class Credentials {
  private constructor(
    private readonly agents: readonly string[],
    /** SHA-256 of each agent's token, by agent index (empty: no agent tokens). */
    private readonly agentDigests: readonly Buffer[],
    private readonly serviceDigest: Buffer | undefined,
    /** Notes for the start-up log (a tokens file others can read). */
    readonly notes: readonly string[],
  ) {}

  /**
   * Read the agent tokens from `file` (a JSON object `{agent: token}` naming every agent of the
   * config, each token at least MIN_TOKEN_CHARS characters and distinct), if given, beside the
   * service token, if any. Throws CORL_ERR_SERVE_TOKENS naming the file and the entry.
   */
  static load(agents: readonly string[], file: string | undefined, serviceToken: string | undefined): Credentials {
    const service = serviceToken ? digest(serviceToken) : undefined;
    if (file === undefined) return new Credentials(agents, [], service, []);
    let text: string;
    try {
      // Opened without blocking and checked on the descriptor: no race with a swap for a FIFO.
      text = readUserText(file, MAX_TOKENS_FILE_BYTES);
    } catch (e) {
      throw tokensError(`expected a readable tokens file ${file}, got ${(e as Error).message}`, file);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw tokensError(
        `expected a JSON object {"<agent>": "<token>"} in ${file}, got ${(e as Error).message}`,
        file,
        'write one entry per agent of the config, e.g. {"qwen": "<random token>", "llama": "<another>"}',
      );
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw tokensError(`expected a JSON object {"<agent>": "<token>"} in ${file}, got ${typeof parsed}`, file);
    const given = parsed as Record<string, unknown>;
    for (const name of Object.keys(given))
      if (!agents.includes(name))
        throw tokensError(
          `expected only agents of the config (${agents.map((a) => `"${a}"`).join(', ')}) in ${file}, got "${name}"`,
          `${file}: ${name}`,
        );
    const seen = new Map<string, string>();
    const digests = agents.map((name) => {
      const t = given[name];
      if (typeof t !== 'string' || t.length < MIN_TOKEN_CHARS)
        throw tokensError(
          `expected a token of at least ${MIN_TOKEN_CHARS} characters for agent "${name}" in ${file}, got ${typeof t === 'string' ? `${t.length} characters` : t === undefined ? 'none' : typeof t}`,
          `${file}: ${name}`,
          'every agent needs its own token, e.g. `openssl rand -hex 24`',
        );
      const other = seen.get(t);
      if (other !== undefined || (serviceToken !== undefined && t === serviceToken))
        throw tokensError(
          `expected a token of agent "${name}" that no other agent${serviceToken !== undefined ? ' and not the service token' : ''} has, got the same as ${other !== undefined ? `agent "${other}"` : 'the service token'}`,
          `${file}: ${name}`,
        );
      seen.set(t, name);
      return digest(t);
    });
    const notes: string[] = [];
    try {
      if ((fs.statSync(file).mode & 0o077) !== 0)
        notes.push(`serve: the tokens file ${file} is readable by other users of this machine (chmod 600 it)`);
    } catch {
      /* read above; a race is harmless here */
    }
    return new Credentials(agents, digests, service, notes);
  }

  /** Per-agent tokens, one shared token, or none. */
  get mode(): AuthMode {
    return this.agentDigests.length > 0 ? 'agents' : this.serviceDigest ? 'shared' : 'none';
  }

  /** Whether any credential is required (every route but GET /health then needs one). */
  get required(): boolean {
    return this.mode !== 'none';
  }

  /** What the start-up log should say about who may post as whom. */
  startNotes(host: string): string[] {
    const notes = [...this.notes];
    if (this.mode === 'none')
      notes.push(
        `serve: no credentials: any process that reaches ${host} can post as any agent and change what the others get; give each agent its own token (serve.tokens or --tokens-file)`,
      );
    else if (this.mode === 'shared')
      notes.push(
        'serve: one token for every agent: whoever holds it can post as any agent; give each agent its own token (serve.tokens or --tokens-file)',
      );
    return notes;
  }

  /**
   * The caller of a request from its `Authorization: Bearer` header (or, where a client cannot set
   * headers, a token given beside it). Throws CORL_ERR_SERVE_UNAUTHORIZED when credentials are
   * required and none or an unknown one is given. Constant time in the token's contents.
   */
  authenticate(header: string | undefined, queryToken?: string | null): Caller {
    if (!this.required) return { kind: 'open' };
    const h = header ?? '';
    const token = h.startsWith('Bearer ') ? h.slice(7) : (queryToken ?? undefined);
    if (token !== undefined && token !== '') {
      const d = digest(token);
      let agent = -1;
      // every comparison runs, whichever matches
      this.agentDigests.forEach((a, i) => {
        if (timingSafeEqual(a, d)) agent = i;
      });
      const service = this.serviceDigest !== undefined && timingSafeEqual(this.serviceDigest, d);
      if (agent >= 0) return { kind: 'agent', agent };
      if (service) return { kind: 'service' };
    }
    throw new CorlError(
      'CORL_ERR_SERVE_UNAUTHORIZED',
      `expected "Authorization: Bearer <token>" with ${this.mode === 'agents' ? "an agent's token" : "the service's token"}, got ${token ? 'a token the service does not know' : 'no Authorization header'}`,
      { where: 'Authorization' },
    );
  }

  /**
   * The agent a caller may post as, given the agent the request names (undefined: none named).
   * With agent tokens only that token's agent; with a shared token or none, whichever is named.
   * Throws CORL_ERR_SERVE_FORBIDDEN when the request names another agent or the caller holds the
   * service token (which may read metrics, never post).
   */
  agentOf(caller: Caller, named: number | undefined, where: string): number | undefined {
    if (caller.kind === 'open' || (caller.kind === 'service' && this.mode === 'shared')) return named;
    if (caller.kind === 'service')
      throw new CorlError(
        'CORL_ERR_SERVE_FORBIDDEN',
        `expected an agent's own token to post${named !== undefined ? ` as "${this.agents[named]}"` : ''}, got the service token (it reads GET /metrics, it never posts)`,
        { where: 'Authorization' },
      );
    if (named !== undefined && named !== caller.agent)
      throw new CorlError(
        'CORL_ERR_SERVE_FORBIDDEN',
        `expected to post as "${this.agents[caller.agent]}" (the agent whose token this is), got a request as "${this.agents[named]}"`,
        { where, hint: "each agent's trainer posts with its own token, and only as itself" },
      );
    return caller.agent;
  }
}
