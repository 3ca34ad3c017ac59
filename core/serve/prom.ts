// Prometheus text exposition (format 0.0.4) for the few metric types the service needs.

type Labels = Readonly<Record<string, string>>;

function labelText(labels: Labels): string {
  // Called for every metric update of every request: values needing no escape skip the replaces.
  let text = '';
  for (const k in labels) {
    const v = labels[k]!;
    const escaped = /[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v;
    text += `${text ? ',' : '{'}${k}="${escaped}"`;
  }
  return text ? `${text}}` : '';
}

function num(v: number): string {
  return Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
}

interface Metric {
  render(): string;
}

/** A monotonically increasing count, per label set. */
export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const k = labelText(labels);
    const e = this.values.get(k);
    if (e) e.value += by;
    else this.values.set(k, { labels, value: by });
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.value ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const e of this.values.values()) lines.push(`${this.name}${labelText(e.labels)} ${num(e.value)}`);
    return lines.join('\n');
  }
}

/** A value read when scraped. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
  ) {}
  render(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, `${this.name} ${num(this.read())}`].join(
      '\n',
    );
  }
}

/** Values per label set, read when scraped. */
export class LabeledGauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => readonly { readonly labels: Labels; readonly value: number }[],
  ) {}
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const e of this.read()) lines.push(`${this.name}${labelText(e.labels)} ${num(e.value)}`);
    return lines.join('\n');
  }
}

/** Cumulative buckets, sum and count, per label set. */
export class Histogram implements Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}
  observe(value: number, labels: Labels = {}): void {
    const k = labelText(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  count(labels: Labels = {}): number {
    return this.series.get(labelText(labels))?.count ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      this.buckets.forEach((b, i) =>
        lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: num(b) })} ${s.counts[i]}`),
      );
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(s.labels)} ${num(s.sum)}`);
      lines.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return lines.join('\n');
  }
}

const LATENCY = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Every metric `corl serve` exports on GET /metrics. */
export class ServeMetrics {
  readonly requests = new Counter('corl_serve_requests_total', 'HTTP requests by route and status code');
  readonly latency = new Histogram(
    'corl_serve_request_duration_seconds',
    'time from request start to the end of the answer, by route',
    LATENCY,
  );
  readonly completions = new Counter('corl_serve_completions_scored_total', 'completions given a reward, by route');
  readonly waits = new Counter(
    'corl_serve_exchange_waits_total',
    "groups that waited for supervisors' answers, by outcome (arrived or timeout)",
  );
  readonly waitSeconds = new Histogram(
    'corl_serve_exchange_wait_seconds',
    "time groups waited for supervisors' answers",
    LATENCY,
  );
  readonly fallbacks = new Counter(
    'corl_serve_exchange_fallbacks_total',
    'groups answered without every supervisor, by kind (partial, self, zero, error)',
  );
  readonly unseen = new Counter(
    'corl_serve_exchange_peer_unseen_total',
    'supervisors missing from a fallback answer that hold its problem at no kept step or round (they never sampled it)',
  );
  readonly replays = new Counter('corl_serve_idempotent_replays_total', 'retries answered from a stored answer');
  readonly barrierPartial = new Counter(
    'corl_serve_barrier_partial_groups_total',
    'POST /get_reward groups scored with fewer than groupSize samples after the wait',
  );
  readonly sampleGroups = new Counter(
    'corl_serve_sample_groups_total',
    'groups formed by POST /v1/samples: complete (the declared size arrived), partial (serve.samples.wait ran out), or late (one sample of a group scored short, scored alone)',
  );
  readonly labelsGraded = new Counter(
    'corl_serve_labels_graded_total',
    'label-free groups whose label was graded against the reference their trainer sent, by agent',
  );
  readonly labelsRight = new Counter(
    'corl_serve_labels_right_total',
    'graded labels equal to the reference (label accuracy: this over corl_serve_labels_graded_total), by agent',
  );
  readonly rewardsGraded = new Counter(
    'corl_serve_rewards_graded_total',
    'completions of graded groups with 0/1 rewards, by agent',
  );
  readonly rewardsRight = new Counter(
    'corl_serve_rewards_right_total',
    'graded completions whose reward is the one ground truth gives (reward accuracy: this over corl_serve_rewards_graded_total), by agent',
  );
  readonly boardPoints = new Counter(
    'corl_serve_board_points_total',
    "points written to the service's metrics sinks (serve config `metrics`, --tensorboard), by agent",
  );
  readonly boardDropped = new Counter(
    'corl_serve_board_late_answers_total',
    'answers at a step whose point was already written to the metrics sinks (counted here only), by agent',
  );
  readonly sinkErrors = new Counter(
    'corl_serve_metrics_sink_errors_total',
    'metrics records a sink (or the points file) failed to take, by sink; the reply went out all the same',
  );
  readonly untokenized = new Counter(
    'corl_serve_untokenized_completions_total',
    'completions posted without a token count, by route (their length is the character count)',
  );
  readonly journalRecords = new Counter('corl_serve_journal_records_total', 'records appended to the label journal');
  readonly journalSync = new Histogram(
    'corl_serve_journal_sync_seconds',
    'duration of each journal fdatasync (one per group commit)',
    LATENCY,
  );
  readonly clientErrors = new Counter(
    'corl_serve_client_errors_total',
    'connections closed before a request could be handled, by reason (malformed HTTP, or a timeout: headers or body too slow)',
  );
  readonly connectionsRefused = new Counter(
    'corl_serve_connections_refused_total',
    'connections over serve.maxConnections or serve.maxConnectionsPerPeer while every held one has a request in progress, by outcome (answered: a coded 503 or GET /health, then closed; dropped: closed at once, beyond the spare)',
  );
  readonly connectionsEvicted = new Counter(
    'corl_serve_connections_evicted_total',
    'connections without a request in progress closed to make room for a new one, by cap (total: serve.maxConnections; peer: serve.maxConnectionsPerPeer)',
  );
  readonly waitsAnswered = new Counter(
    'corl_serve_waits_answered_early_total',
    "POST /v1/samples/wait requests answered before their time with what they had, to give their place to another agent's wait (all agents' waits at their bound)",
  );
  private readonly extra: Metric[] = [];

  /** Add a gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number): void {
    this.extra.push(new Gauge(name, help, read));
  }

  /** Add a gauge of one value per label set, read at scrape time. */
  labeledGauge(
    name: string,
    help: string,
    read: () => readonly { readonly labels: Labels; readonly value: number }[],
  ): void {
    this.extra.push(new LabeledGauge(name, help, read));
  }

  /** The exposition text. */
  render(): string {
    const all: Metric[] = [
      this.requests,
      this.latency,
      this.completions,
      this.waits,
      this.waitSeconds,
      this.fallbacks,
      this.unseen,
      this.replays,
      this.barrierPartial,
      this.sampleGroups,
      this.untokenized,
      this.labelsGraded,
      this.labelsRight,
      this.rewardsGraded,
      this.rewardsRight,
      this.boardPoints,
      this.boardDropped,
      this.sinkErrors,
      this.journalRecords,
      this.journalSync,
      this.clientErrors,
      this.connectionsRefused,
      this.connectionsEvicted,
      this.waitsAnswered,
      ...this.extra,
    ];
    return all.map((m) => m.render()).join('\n') + '\n';
  }
}
