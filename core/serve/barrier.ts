// POST /get_reward: OpenRLHF sends samples one at a time (the K samples of a prompt concurrently);
// a group reward source needs all K, so samples meet at a barrier keyed by prompt (or label).
import { createHmac, randomBytes } from 'node:crypto';
import { CorlError } from '../errors';
import type { Exchange } from './exchange';
import { capKey } from './keys';
import { MAX_GROUP_ID } from './restore';
import { sharedRequestWork, type RequestWork } from './work';
import type { ServeBoard } from './board';
import type { ServeMetrics } from './prom';
import { sampleGrades, type GroupAnswer, type PostedGroup, type Scorer } from './scorer';
import type { ServeRuntime } from './setup';

/** One OpenRLHF sample. */
export interface GetRewardSample {
  readonly query: string;
  readonly prompt?: string;
  readonly label?: string | null;
  /** False: a vote-only sample (the request's `train`): it votes with its group and gets no reward. */
  readonly train?: boolean;
}

/** The reward of one sample (null: a vote-only one) and what goes to `extra_logs`. */
export interface SampleResult {
  readonly reward: number | null;
  readonly logs: Readonly<Record<string, number>>;
}

interface OpenGroup {
  readonly agent: number;
  readonly key: string;
  readonly prompt: string;
  readonly members: {
    sample: GetRewardSample;
    response: string;
    /** Aborted when the member's request goes away (undefined: a keyed request, whose retry may claim it). */
    gone?: AbortSignal;
    resolve: (r: SampleResult) => void;
    reject: (e: unknown) => void;
  }[];
  timer?: NodeJS.Timeout;
}

/** The response part of an OpenRLHF query (prompt + response, decoded with special tokens). */
export function responseOf(query: string, prompt: string | undefined, strip: readonly string[]): string {
  let r = prompt !== undefined && prompt.length > 0 && query.startsWith(prompt) ? query.slice(prompt.length) : query;
  for (let changed = true; changed;) {
    changed = false;
    r = r.trimEnd();
    for (const t of strip) {
      if (r.endsWith(t)) {
        r = r.slice(0, -t.length);
        changed = true;
      }
    }
  }
  return r;
}

/** Scores OpenRLHF samples: pointwise sources at once, group sources once their group is complete. */
export class GetRewardScorer {
  private readonly open = new Map<string, OpenGroup>();
  /** Per agent, samples waiting at the barrier (each agent within serve.getReward.maxPending). */
  private readonly waiting: number[];
  private closing = false;
  /**
   * Key of the ids plugins see for groups keyed by label: the label may be the reference answer (it
   * is OpenRLHF's `--data.label_key` column), so a label-free reward must not read it from
   * `problem.id`. Random per process: the id is stable while the service runs, and unguessable.
   */
  private readonly idKey = randomBytes(32);

  constructor(
    private readonly rt: ServeRuntime,
    private readonly scorer: Scorer,
    private readonly exchange: Exchange,
    private readonly metrics: ServeMetrics,
    /** Where answers scored outside the exchange (self-supervised, pointwise) are counted for the metrics sinks. */
    private readonly board?: Pick<ServeBoard, 'decided'>,
  ) {
    this.waiting = rt.agents.map(() => 0);
  }

  /** Samples waiting at the barrier. */
  get pending(): number {
    return this.waiting.reduce((a, b) => a + b, 0);
  }

  /**
   * Rewards of a request's samples, aligned with them. When `gone` aborts (the request went away
   * and no retry can claim it: it has no Idempotency-Key) before a sample's group is complete, the
   * sample leaves the barrier, so that a re-sent copy is not counted twice.
   */
  score(agent: number, samples: readonly GetRewardSample[], req: RequestWork): Promise<SampleResult[]> {
    if (this.closing)
      return Promise.reject(
        new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down'),
      );
    const strip = this.rt.settings.getReward.stripTokens;
    if (this.rt.readsGroundTruth) {
      samples.forEach((s, i) => {
        if (typeof s.label !== 'string') {
          throw new CorlError(
            'CORL_ERR_SERVE_BAD_REQUEST',
            `expected labels[${i}] to carry the reference answer because "${this.rt.config.reward.use}" reads ground truth, got ${s.label === undefined ? 'no labels field' : 'null'}`,
            { where: `labels[${i}]`, hint: 'start OpenRLHF with --data.label_key naming the answer column' },
          );
        }
      });
    }
    if (this.rt.pointwise)
      return Promise.all(samples.map((s) => this.pointwise(agent, s, responseOf(s.query, s.prompt, strip), req)));
    const by = this.rt.settings.getReward.groupBy;
    samples.forEach((s, i) => {
      const key = by === 'prompt' ? s.prompt : s.label;
      if (typeof key !== 'string') {
        throw new CorlError(
          'CORL_ERR_SERVE_BAD_REQUEST',
          `expected ${by === 'prompt' ? 'prompts' : 'labels'}[${i}] (samples are grouped by ${by}), got ${key === undefined ? 'no such field' : 'null'}`,
          { where: `${by === 'prompt' ? 'prompts' : 'labels'}[${i}]` },
        );
      }
    });
    // Bounded per agent, the request whole: a keyed request's samples stay here after it goes away
    // (its retry claims them), so without a bound one agent could fill memory within the wait.
    const max = this.rt.settings.getReward.maxPending;
    if (this.waiting[agent]! + samples.length > max)
      throw new CorlError(
        'CORL_ERR_SERVE_BUSY',
        `expected at most ${max} samples of agent "${this.rt.agents[agent]}" waiting at the barrier (serve.getReward.maxPending, per agent), got ${this.waiting[agent]} waiting and ${samples.length} more`,
        { where: 'query', hint: "retry after a moment: complete groups (or getReward.wait's end) free their samples" },
      );
    return Promise.all(
      samples.map((s) =>
        this.join(
          agent,
          groupKey(by === 'prompt' ? s.prompt! : s.label!),
          s,
          responseOf(s.query, s.prompt, strip),
          req,
        ),
      ),
    );
  }

  private async pointwise(
    agent: number,
    s: GetRewardSample,
    response: string,
    req: RequestWork,
  ): Promise<SampleResult> {
    const group: PostedGroup = {
      id: 'sample',
      prompt: s.prompt ?? '',
      completions: [{ text: response }],
      ...(typeof s.label === 'string' ? { reference: s.label } : {}),
    };
    const a = await this.scorer.scoreAlone(agent, 0, group, req, 'its samples');
    this.board?.decided(agent, 'stepless', a);
    return resultOf(a, 0, s.train === false);
  }

  // Every arrival is a sample: identical texts are legitimate (small models repeat themselves), and
  // OpenRLHF retries only after an error, when the original is no longer waiting here.
  private join(
    agent: number,
    key: string,
    s: GetRewardSample,
    response: string,
    req: RequestWork,
  ): Promise<SampleResult> {
    const gone = req.gone;
    if (gone?.aborted) return Promise.reject(gone.reason);
    const gk = `${agent}\u0000${key}`;
    let g = this.open.get(gk);
    if (!g) {
      g = { agent, key, prompt: s.prompt ?? '', members: [] };
      this.open.set(gk, g);
      const group = g;
      g.timer = setTimeout(() => this.close(gk, group, true), this.rt.settings.getReward.wait * 1000);
    }
    const group = g;
    const done = new Promise<SampleResult>((resolve, reject) => {
      const member = { sample: s, response, gone, resolve, reject };
      group.members.push(member);
      this.waiting[agent]!++;
      gone?.addEventListener(
        'abort',
        () => {
          // Still waiting for the rest of its group: the sample was never counted; it leaves.
          const i = group.members.indexOf(member);
          if (this.open.get(gk) !== group || i < 0) return;
          group.members.splice(i, 1);
          this.waiting[agent]!--;
          if (group.members.length === 0) {
            this.open.delete(gk);
            clearTimeout(group.timer);
          }
          reject(gone.reason);
        },
        { once: true },
      );
    });
    if (g.members.length >= this.rt.settings.getReward.groupSize) this.close(gk, g, false);
    return done;
  }

  private close(gk: string, g: OpenGroup, partial: boolean): void {
    if (this.open.get(gk) !== g) return;
    this.open.delete(gk);
    clearTimeout(g.timer);
    this.waiting[g.agent]! -= g.members.length;
    if (partial) this.metrics.barrierPartial.inc();
    // Arrival order is meaningless (concurrent requests); order by text so retries vote alike.
    const members = [...g.members].sort((a, b) =>
      a.sample.query < b.sample.query ? -1 : a.sample.query > b.sample.query ? 1 : 0,
    );
    const reference = members.map((m) => m.sample.label).find((l): l is string => typeof l === 'string');
    const group: PostedGroup = {
      id: g.key,
      ...(this.rt.settings.getReward.groupBy === 'label' ? { problemId: this.labelId(g.key) } : {}),
      prompt: g.prompt,
      completions: members.map((m) => ({ text: m.response })),
      // Only a reward that reads ground truth is handed it (core/serve/scorer.ts); a label-free
      // one's label is graded against it (diagnostics).
      ...(reference !== undefined ? { reference } : {}),
    };
    this.scoreGroup(g.agent, group, this.groupWork(g.agent, members)).then(
      (a) => {
        members.forEach((m, i) => m.resolve(resultOf(a, i, m.sample.train === false)));
      },
      (e) => {
        for (const m of members) m.reject(e);
      },
    );
  }

  /** The `problem.id` plugins see for a group keyed by `label`: a keyed digest that cannot be inverted to it. */
  private labelId(label: string): string {
    return `label-${createHmac('sha256', this.idKey).update(label).digest('hex').slice(0, 32)}`;
  }

  /** The work of a closed group, for its agent's lane: stopped only when every member's request has gone away. */
  private groupWork(agent: number, members: OpenGroup['members']): RequestWork {
    return sharedRequestWork(
      this.rt.agents[agent]!,
      this.rt.settings.timeouts.work,
      members.map((m) => m.gone),
    );
  }

  private async scoreGroup(agent: number, group: PostedGroup, req: RequestWork): Promise<GroupAnswer> {
    const sup = this.rt.topology.supervisors(agent, this.rt.agents.length);
    if (sup.length === 1 && sup[0] === agent) {
      const answer = await this.scorer.scoreAlone(agent, 0, group, req, 'its group');
      this.board?.decided(agent, 'stepless', answer);
      return answer;
    }
    // Peer topology: the exchange, in rounds matched by problem (docs/guide/serve.md "Rounds
    // without a step"), kept in the journaled store so that they survive restarts.
    return (await this.exchange.postRound(agent, group, undefined, req)).answer;
  }

  /** Fail every waiting sample with 503 (shutdown). */
  shutdown(): void {
    this.closing = true;
    for (const [gk, g] of this.open) {
      this.open.delete(gk);
      clearTimeout(g.timer);
      this.waiting[g.agent]! -= g.members.length;
      for (const m of g.members)
        m.reject(new CorlError('CORL_ERR_SERVE_UNAVAILABLE', 'expected a running service, got one shutting down'));
    }
  }
}

/** The exchange id of a group key: the key itself up to MAX_GROUP_ID characters, else its digest (a prompt can be megabytes). */
export function groupKey(key: string): string {
  return capKey(key, MAX_GROUP_ID);
}

function resultOf(a: GroupAnswer, i: number, voteOnly: boolean): SampleResult {
  const logs: Record<string, number> = { ...a.metrics };
  if (a.label !== undefined) logs['label/labeled'] = a.label !== null ? 1 : 0;
  if (a.agree !== undefined) logs['label/peer_agreement'] = a.agree;
  Object.assign(logs, sampleGrades(a, i));
  // A vote-only sample's reward is neither sent nor graded.
  if (voteOnly) {
    delete logs['reward/accuracy'];
    return { reward: null, logs };
  }
  logs['exchange/fallback'] = a.source === 'self' || a.source === 'zero' ? 1 : 0;
  return { reward: a.rewards[i]!, logs };
}
