// Open connections, bounded in all and per peer address (docs/guide/serve.md "Security and
// limits"). A new connection over a cap waits in a small spare pool; when it sends a request, a held
// connection without a request in progress (idle between requests, or still sending headers or a
// body) is closed to make room for it, chosen so that one agent never takes another's places: a
// connection belongs to the agent whose token its last request carried, each agent has a share of
// the places (`min(maxConnections, maxConnectionsPerPeer)` / agents), and an agent's connections
// within its share are never closed for another agent's request. What gives way, in this order:
// connections of no agent (that served a request, or opened at least KEEP_PLACE_MS ago), the agent
// holding the most places beyond its share, the requesting agent's own, and for a request of an
// agent, a connection of no agent still within its grace. Without agent tokens (no one's identity
// is known before its body) the one without work longest, past its grace, gives way as before.
// A connection's request in progress counts against its agent's bound too (`HeldRequests`,
// serve.maxHeldPerAgent: by default the agent's share), so that agents sharing a host cannot take
// each other's places with requests that wait for their groups.
import type { Socket } from 'node:net';
import { CorlError } from '../errors';

/** How long a connection keeps its place after it opened or finished a request, before it may be closed for another. */
export const KEEP_PLACE_MS = 1000;

interface Entry {
  readonly peer: string;
  /** When it last started waiting without work (opened, or finished a request). */
  since: number;
  /** Requests the service is working on (body read, answer not finished). */
  working: number;
  released: boolean;
  /** The agent whose token (or, without agent tokens, whose name) its last request carried. */
  agent?: number;
  /** It carried a request: it no longer needs the grace of a new connection. */
  served: boolean;
}

/** Which cap a connection was over. */
export type Cap = 'total' | 'peer';

/** The open connections of a service. */
export class ConnectionTable {
  private readonly entries = new Map<Socket, Entry>();
  /** Held connections without work, from the one without work longest to the most recent. */
  private readonly idle = new Map<Socket, Entry>();
  private readonly perPeer = new Map<string, number>();
  /** Connections over a cap that have not sent a request yet, oldest first. */
  private readonly spare = new Set<Socket>();
  /** Held connections per agent. */
  private readonly perAgent = new Map<number, number>();

  /**
   * `share`: the places an agent keeps whatever other agents ask (at most the smaller cap over the
   * agents); `known`: whether a request's agent is proven (agent tokens) before its body is read.
   */
  constructor(
    private readonly maxTotal: number,
    private readonly maxPerPeer: number,
    private readonly maxSpare: number,
    private readonly events: { evicted?(cap: Cap): void; dropped?(): void } = {},
    private readonly share = Infinity,
    private readonly known = false,
  ) {}

  /** Connections held for an agent. */
  ofAgent(agent: number): number {
    return this.perAgent.get(agent) ?? 0;
  }

  /** A request arrived on this connection (it needs no grace any more). */
  seen(socket: Socket): void {
    const e = this.entries.get(socket);
    if (e) e.served = true;
  }

  /** The connection's request is of `agent`: the connection counts as that agent's from now. */
  claim(socket: Socket, agent: number): void {
    const e = this.entries.get(socket);
    if (!e || e.agent === agent) return;
    if (e.agent !== undefined) this.count(e.agent, -1);
    e.agent = agent;
    this.count(agent, 1);
  }

  private count(agent: number, by: number): void {
    const n = this.ofAgent(agent) + by;
    if (n > 0) this.perAgent.set(agent, n);
    else this.perAgent.delete(agent);
  }

  /** Most connections open at once since the start (held and spare). */
  private peakOpen = 0;

  /** Connections held (within the caps). */
  get size(): number {
    return this.entries.size;
  }

  /** Connections open now: held, and spare ones over a cap not yet answered. */
  get open(): number {
    return this.entries.size + this.spare.size;
  }

  /** The most connections open at once since the service started. */
  get peak(): number {
    return this.peakOpen;
  }

  /** Connections held for a peer address. */
  of(peer: string): number {
    return this.perPeer.get(peer) ?? 0;
  }

  /** Which cap a connection from `peer` is over; undefined when there is room. */
  private over(peer: string): Cap | undefined {
    if (this.of(peer) >= this.maxPerPeer) return 'peer';
    if (this.entries.size >= this.maxTotal) return 'total';
    return undefined;
  }

  /**
   * A new connection: held when there is room, else put in the spare pool (whose oldest member is
   * closed when it is full) until it sends a request; returns the cap it is over, if any.
   */
  add(socket: Socket): Cap | undefined {
    const cap = this.over(socket.remoteAddress ?? '');
    if (cap === undefined) {
      this.hold(socket);
      this.peakOpen = Math.max(this.peakOpen, this.open);
      return undefined;
    }
    if (this.spare.size >= this.maxSpare) {
      const oldest = this.spare.values().next().value as Socket;
      this.spare.delete(oldest);
      oldest.destroy();
      this.events.dropped?.();
    }
    this.spare.add(socket);
    socket.once('close', () => this.spare.delete(socket));
    this.peakOpen = Math.max(this.peakOpen, this.open);
    return cap;
  }

  /**
   * A connection over a cap sent a request (of `agent`, when its token proves one): make room for it
   * by closing a held connection without work (of its peer, when its peer is at the cap), chosen as
   * the file's head says. Returns the cap still in the way, or undefined once the connection is held.
   */
  promote(socket: Socket, agent?: number): Cap | undefined {
    if (this.entries.has(socket)) return undefined;
    const peer = socket.remoteAddress ?? '';
    let cap = this.over(peer);
    if (cap !== undefined && this.evict(cap, cap === 'peer' ? peer : undefined, agent)) cap = this.over(peer);
    if (cap !== undefined) return cap;
    this.spare.delete(socket);
    this.hold(socket);
    if (agent !== undefined) this.claim(socket, agent);
    return undefined;
  }

  /** The service started working for a request on this connection (it must not be closed now). */
  busy(socket: Socket): void {
    const e = this.entries.get(socket);
    if (!e) return;
    e.working++;
    this.idle.delete(socket);
  }

  /** The service finished a request on this connection: it waits for its next one from now. */
  done(socket: Socket): void {
    const e = this.entries.get(socket);
    if (!e || e.working === 0) return;
    if (--e.working === 0) {
      e.since = performance.now();
      this.idle.set(socket, e);
    }
  }

  private hold(socket: Socket): void {
    const peer = socket.remoteAddress ?? '';
    const entry: Entry = { peer, since: performance.now(), working: 0, released: false, served: false };
    this.entries.set(socket, entry);
    this.idle.set(socket, entry);
    this.perPeer.set(peer, this.of(peer) + 1);
    socket.once('close', () => this.release(socket));
  }

  /** The held connection without work that gives way for a request of `agent` (undefined: not known). */
  private victim(peer: string | undefined, agent: number | undefined): Socket | undefined {
    const now = performance.now();
    const idle = [...this.idle].filter(([, e]) => peer === undefined || e.peer === peer);
    // Oldest first. A connection of no agent that served a request, or opened past its grace.
    for (const [socket, e] of idle)
      if (e.agent === undefined && (e.served || now - e.since >= KEEP_PLACE_MS)) return socket;
    // The agent holding the most places beyond its share: its connection without work longest.
    let most = this.share;
    let pick: Socket | undefined;
    for (const [socket, e] of idle) {
      if (e.agent === undefined) continue;
      const n = this.ofAgent(e.agent);
      if (n > most) [most, pick] = [n, socket];
    }
    if (pick) return pick;
    if (agent !== undefined) {
      // The requesting agent's own, then a new connection of no agent still within its grace.
      for (const [socket, e] of idle) if (e.agent === agent) return socket;
      for (const [socket, e] of idle) if (e.agent === undefined) return socket;
    }
    // Without agent tokens who a connection belongs to is only what its requests claim.
    if (!this.known) for (const [socket, e] of idle) if (now - e.since >= KEEP_PLACE_MS) return socket;
    return undefined;
  }

  private evict(cap: Cap, peer: string | undefined, agent: number | undefined): boolean {
    const socket = this.victim(peer, agent);
    if (!socket) return false;
    this.release(socket);
    socket.destroy();
    this.events.evicted?.(cap);
    return true;
  }

  private release(socket: Socket): void {
    const e = this.entries.get(socket);
    if (!e || e.released) return;
    e.released = true;
    this.entries.delete(socket);
    this.idle.delete(socket);
    if (e.agent !== undefined) this.count(e.agent, -1);
    const n = this.of(e.peer) - 1;
    if (n > 0) this.perPeer.set(e.peer, n);
    else this.perPeer.delete(e.peer);
  }
}

/**
 * The most POST requests one agent may have in progress at once (`serve.maxHeldPerAgent`; unset,
 * its share of one peer's places), so that all agents at their bounds fit in the places of a
 * single peer address: one agent holding every request it may never refuses another on that host.
 */
export function heldPerAgent(
  s: { readonly maxConnections: number; readonly maxConnectionsPerPeer: number; readonly maxHeldPerAgent?: number },
  agents: number,
): number {
  const places = Math.min(s.maxConnections, s.maxConnectionsPerPeer);
  const share = Math.max(1, Math.floor(places / agents));
  if (s.maxHeldPerAgent === undefined) return share;
  if (s.maxHeldPerAgent * agents > places)
    throw new CorlError(
      'CORL_ERR_CONFIG_INVALID',
      `expected serve.maxHeldPerAgent × ${agents} agents to be at most ${places} (the smaller of serve.maxConnections and serve.maxConnectionsPerPeer), got ${s.maxHeldPerAgent} × ${agents} = ${s.maxHeldPerAgent * agents}: agents at their bounds would fill one peer's places and refuse another agent`,
      {
        where: 'serve.maxHeldPerAgent',
        hint: `set it to at most ${share}, or raise serve.maxConnectionsPerPeer and serve.maxConnections`,
      },
    );
  return s.maxHeldPerAgent;
}

/** POST requests in progress per agent, within a bound per agent (each one holds a connection). */
export class HeldRequests {
  private readonly held: number[];

  constructor(
    readonly max: number,
    agents: number,
  ) {
    this.held = new Array<number>(agents).fill(0);
  }

  /** Requests of `agent` in progress now. */
  of(agent: number): number {
    return this.held[agent] ?? 0;
  }

  /** One more request of `agent`: false (nothing counted) when it already has `max` in progress. */
  take(agent: number): boolean {
    if (this.of(agent) >= this.max) return false;
    this.held[agent] = this.of(agent) + 1;
    return true;
  }

  /** A request of `agent` was answered (or went away). */
  release(agent: number): void {
    if (this.of(agent) > 0) this.held[agent] = this.of(agent) - 1;
  }
}
