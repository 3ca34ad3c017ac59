// `npm run bench serve`: `corl serve` under load. The service runs as a child process (the real
// `node bin/corl.js serve`, journal and fdatasync included) on a loopback port; this process plays 8
// agents posting POST /v1/groups concurrently, each request one 12-completion group or a micro-batch
// of 8 such groups, of about 600-character math completions ending in a boxed answer. Two configs: a ring (Co-RL: each
// agent waits for its peer's answers of the same step) and corl:self (TTRL: no waiting).
// Each case runs for a fixed time (BENCH_SERVE_SECONDS, default 8) against a freshly started service, from
// its first request on: nothing is excluded as warm-up, since "holds" means sustained throughput and a
// service's first seconds (V8 still compiling the request path) are part of what a cohort gets.
// Figures over the whole window: completions scored per second, request latency p50/p99 as the agents
// see it, requests, service CPU per request; then a per-second series (completions/s, p50/p99, service
// CPU per request) that shows the ramp from cold, and the first second on its own.
// Each config also runs with the journal off (serve.journal: false), side by side; another keeps the journal on tmpfs, separating the disk's fdatasync from the service's work.
// A summary at the end puts the journal on, off and on tmpfs side by side, and says whether the
// journal-on target (>= 20k completions/s, p99 < 20 ms, one group per request, over the whole window) was met, with the load.
// Profile the service with BENCH_SERVE_PROF=<dir> (passes --cpu-prof --cpu-prof-dir=<dir>); run only
// some cases with BENCH_SERVE_ONLY=<regular expression> over "<label>, <n> group(s) per request".
// Last, a default-size verl step of two agents through the shipped verl adapter (bench/serve-verl-step.ts):
// time to score the whole step, peak connections, service memory (BENCH_SERVE_ONLY='verl step' alone).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Rng } from '../core/util/rng';
import type { Bench } from './index';
import { verlStepCase } from './serve-verl-step';

const ROOT = path.resolve(__dirname, '..', '..');
const AGENTS = 8;
const K = 12;
/** Groups per request: one prompt's group (a trainer posting as it goes), or a micro-batch of 8 prompts. */
const REQUEST_SIZES = [1, 8];
/** Seconds each case runs, from the service's first request to its last answer. */
const SECONDS = benchSeconds(process.env.BENCH_SERVE_SECONDS, process.env.BENCH_SERVE_WARMUP);

const FILLER = [
  'Let us set up the problem carefully. ',
  'We have $x = 3$ and $y^2 = 9$, so $y = \\pm 3$. ',
  'Adding the two equations gives 12 + 7 = 19. ',
  'Now substitute back into \\(2a + b = 11\\). ',
  'The area is $\\frac{1}{2} b h = 24$. ',
  'Checking: $5 \\cdot 4 = 20$, which matches. ',
  'Wait, that is not right; let me recompute the sum. ',
  'By the quadratic formula, $x = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}$. ',
  'Hence the total is 3 + 4 + 5 = 12 items. ',
  'Therefore, simplifying further, ',
];
const FORMS = [
  (n: number) => `${n}`,
  (n: number) => `\\frac{${n}}{2}`,
  (n: number) => `${n}\\sqrt{2}`,
  (n: number) => `(${n}, ${n + 1})`,
  (n: number) => `${n}.0`,
];

function completionText(rng: Rng, group: number): string {
  let text = '';
  while (text.length < 560) text += FILLER[rng.int(FILLER.length)];
  const u = rng.next();
  if (u < 0.1) return `${text}I am not sure how to finish this.`;
  const n = u < 0.7 ? 10 + (group % 17) : 30 + rng.int(4);
  return `${text}So the final answer is $\\boxed{${FORMS[group % FORMS.length]!(n)}}$.`;
}

/**
 * One agent's request bodies, step 0, 1, 2, ... in turn: a seeded stream per agent, so every run posts the
 * same sequence, and distinct texts (no cache hits across agents or steps). Made as the agent goes, since
 * a timed run's length in requests is not known ahead.
 */
function bodyMaker(agent: number, groups: number): (step: number) => string {
  const rng = new Rng(1000 + agent);
  return (step) =>
    JSON.stringify({
      agent: `agent${agent}`,
      step,
      groups: Array.from({ length: groups }, (_, g) => ({
        id: `s${step}-g${g}`,
        prompt: `Problem ${g} of step ${step}`,
        completions: Array.from({ length: K }, () => completionText(rng, step * groups + g)),
      })),
    });
}

function startService(config: string, journal: string | undefined): Promise<{ url: string; proc: ChildProcess }> {
  const prof = process.env.BENCH_SERVE_PROF;
  const args = [
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
    path.join(ROOT, 'bin', 'corl.js'),
    'serve',
    '-c',
    config,
    '--port',
    '0',
    ...(journal === undefined ? [] : ['--journal', journal]),
  ];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      err += d;
    });
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, proc });
    });
    proc.once('exit', (code) => reject(new Error(`corl serve exited (${code}) before listening: ${err}`)));
  });
}

function postJson(agent: http.Agent, url: URL, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: '/v1/groups',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU seconds (user + system) a process has used so far, from Linux /proc; undefined elsewhere. */
function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state; utime and stime are the 12th and 13th of those.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ, 100 on Linux)
  } catch {
    return undefined;
  }
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** Latency and throughput of a run of answered requests (in the order they were answered). */
interface Stretch {
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** One case's figures, for the side-by-side summary: the whole window, and its first second. */
interface Figures extends Stretch {
  readonly topology: string;
  readonly journal: 'on' | 'off' | 'tmpfs';
  readonly groups: number;
  readonly first: Stretch;
}

/** The target of the journal-on service (issue 14): at 8 agents and one 12-completion group per request. */
const TARGET = { perSecond: 20_000, p99: 20 };

/** A point on the timed window's clock: seconds since its start, service CPU seconds, answers so far. */
interface Mark {
  readonly t: number;
  readonly cpu: number | undefined;
  readonly answered: number;
}

function stretch(latencies: readonly number[], completions: number, seconds: number): Stretch {
  const sorted = [...latencies].sort((x, y) => x - y);
  return {
    perSecond: completions / seconds,
    p50: sorted.length ? quantile(sorted, 0.5) : NaN,
    p99: sorted.length ? quantile(sorted, 0.99) : NaN,
  };
}

/**
 * The 8 agents post step after step until the window's time is up; then each finishes the steps up
 * to the furthest any agent has begun (a ring's agent waits for its peer's same step), and the
 * window ends with the last answer. Latencies are kept in the order the answers came.
 */
async function drive(
  url: URL,
  groups: number,
  onAnswer: (ms: number, ok: boolean, text: string) => void,
): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: AGENTS });
  const next = new Array<number>(AGENTS).fill(0);
  let stop = Infinity;
  const timer = setTimeout(() => {
    stop = Math.max(...next);
  }, SECONDS * 1000);
  const runAgent = async (a: number): Promise<void> => {
    const make = bodyMaker(a, groups);
    let body = make(0);
    while (next[a]! < stop) {
      const t0 = performance.now();
      const pending = postJson(agent, url, body);
      next[a]!++;
      body = make(next[a]!); // the next body is made while this request is in flight
      const r = await pending;
      onAnswer(performance.now() - t0, r.status === 200, r.text);
    }
  };
  try {
    await Promise.all(Array.from({ length: AGENTS }, (_, a) => runAgent(a)));
  } finally {
    clearTimeout(timer);
    agent.destroy();
  }
}

async function measure(
  label: string,
  config: Record<string, unknown>,
  groups: number,
  journalDir = os.tmpdir(),
  results: Figures[] = [],
): Promise<void> {
  const only = process.env.BENCH_SERVE_ONLY;
  if (only && !new RegExp(only).test(`${label}, ${groups} group(s) per request`)) return;
  const dir = fs.mkdtempSync(path.join(journalDir, 'corl-bench-serve-'));
  const file = path.join(dir, 'serve.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const journalOff = (config.serve as { journal?: unknown } | undefined)?.journal === false;
  const service = await startService(file, journalOff ? undefined : path.join(dir, 'journal.jsonl'));
  try {
    const url = new URL(service.url);
    const latencies: number[] = [];
    let failures = 0;
    const onAnswer = (ms: number, ok: boolean, text: string): void => {
      latencies.push(ms);
      if (ok) return;
      failures++;
      if (failures === 1) process.stderr.write(`first failure: ${text.slice(0, 200)}\n`);
    };
    const clientCpu0 = process.cpuUsage();
    const t0 = performance.now();
    const mark = (): Mark => ({
      t: (performance.now() - t0) / 1000,
      cpu: cpuSeconds(service.proc.pid),
      answered: latencies.length,
    });
    const marks: Mark[] = [mark()];
    const ticker = setInterval(() => marks.push(mark()), 1000);
    try {
      await drive(url, groups, onAnswer);
    } finally {
      clearInterval(ticker);
    }
    marks.push(mark());
    // The last answers come in after the time is up: a stub of under half a second joins the second before it.
    if (marks.length >= 3 && marks[marks.length - 1]!.t - marks[marks.length - 2]!.t < 0.5)
      marks.splice(marks.length - 2, 1);
    const seconds = marks[marks.length - 1]!.t;
    const clientCpu = process.cpuUsage(clientCpu0);
    const perRequest = groups * K;
    const whole = stretch(latencies, latencies.length * perRequest, seconds);
    const series = marks.slice(1).map((m, i) => {
      const from = marks[i]!;
      const answered = latencies.slice(from.answered, m.answered);
      return {
        from: from.t,
        to: m.t,
        answered: answered.length,
        cpu: m.cpu === undefined || from.cpu === undefined ? undefined : m.cpu - from.cpu,
        ...stretch(answered, answered.length * perRequest, m.t - from.t),
      };
    });
    const first = series[0]!;
    results.push({
      topology: (config.topology as string).replace(/^corl:/, ''),
      journal: journalOff ? 'off' : journalDir === os.tmpdir() ? 'on' : 'tmpfs',
      groups,
      ...whole,
      first,
    });
    const kib = (Buffer.byteLength(bodyMaker(0, groups)(0)) / 1024).toFixed(1);
    const ms = (x: number): string => x.toFixed(2);
    const cpuUs = (cpu: number | undefined, n: number): string =>
      cpu === undefined || n === 0 ? '-' : ((cpu / n) * 1e6).toFixed(0);
    const serviceCpu =
      marks[0]!.cpu === undefined || marks[marks.length - 1]!.cpu === undefined
        ? undefined
        : marks[marks.length - 1]!.cpu! - marks[0]!.cpu!;
    process.stdout.write(
      `${label}, ${groups} group(s) per request: ${AGENTS} agents, requests of ${groups} x ${K} completions (${kib} KiB each), for ${SECONDS} s from the fresh service's first request (nothing excluded)\n`,
    );
    process.stdout.write(
      `  requests ${latencies.length} (${failures} failed), completions ${latencies.length * perRequest}, ${seconds.toFixed(2)} s\n`,
    );
    process.stdout.write(`  completions scored per second (whole window): ${whole.perSecond.toFixed(0)}\n`);
    const sorted = [...latencies].sort((x, y) => x - y);
    process.stdout.write(
      `  latency ms (whole window): p50 ${ms(whole.p50)}, p99 ${ms(whole.p99)}, max ${ms(sorted[sorted.length - 1] ?? NaN)}\n`,
    );
    process.stdout.write(
      `  first second: ${first.perSecond.toFixed(0)} completions/s, p50 ${ms(first.p50)}, p99 ${ms(first.p99)} ms, service ${cpuUs(first.cpu, first.answered)} µs CPU per request\n`,
    );
    process.stdout.write('  per second (s: completions/s, p50 / p99 ms, service µs CPU per request):\n');
    for (const s of series)
      process.stdout.write(
        `    ${s.from.toFixed(1)}-${s.to.toFixed(1)}: ${s.perSecond.toFixed(0)}, ${ms(s.p50)} / ${ms(s.p99)}, ${cpuUs(s.cpu, s.answered)}\n`,
      );
    // Both run on this machine: the client's share shows whether it, rather than the service, is the limit.
    const share = (cpu: number): string => `${((cpu / seconds) * 100).toFixed(0)}%`;
    process.stdout.write(
      `  cpu of the whole window, as a share of one core: service ${serviceCpu === undefined ? 'unknown' : `${share(serviceCpu)} (${cpuUs(serviceCpu, latencies.length)} µs per request)`}, bench client ${share((clientCpu.user + clientCpu.system) / 1e6)} (${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)})\n`,
    );
    if (journalOff) return;
    const prom = await getText(`${service.url}/metrics`);
    const value = (series: string): number =>
      Number(
        prom
          .split('\n')
          .find((l) => l.startsWith(`${series} `))
          ?.split(' ')[1] ?? NaN,
      );
    const syncs = value('corl_serve_journal_sync_seconds_count');
    const records = value('corl_serve_journal_records_total');
    process.stdout.write(
      `  journal: ${syncs} fdatasyncs, mean ${((value('corl_serve_journal_sync_seconds_sum') / syncs) * 1000).toFixed(2)} ms, ${(records / syncs).toFixed(1)} records per sync\n`,
    );
  } finally {
    const exited = new Promise((r) => service.proc.once('exit', r));
    service.proc.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function getText(url: string): Promise<string> {
  return new Promise<string>((resolve, reject) =>
    http
      .get(url, (res) => {
        let t = '';
        res.on('data', (c) => {
          t += c;
        });
        res.on('end', () => resolve(t));
      })
      .on('error', reject),
  );
}

export const bench: Bench = {
  name: 'serve',
  description: `corl serve: ${AGENTS} agents posting groups of ${K} completions, ${REQUEST_SIZES.join(' or ')} group(s) per request (ring exchange and self vote)`,
  async run() {
    const agents = Array.from({ length: AGENTS }, (_, i) => ({ name: `agent${i}` }));
    const serve = { port: 0, groupSize: K, exchange: { wait: 60, keepSteps: 64 } };
    const results: Figures[] = [];
    for (const groups of REQUEST_SIZES) {
      await measure(
        'ring (Co-RL exchange, each agent waits for its peer)',
        { name: 'bench-serve-ring', agents, topology: 'corl:ring', reward: 'corl:vote', serve },
        groups,
        undefined,
        results,
      );
      await measure(
        'ring, journal off (serve.journal: false)',
        {
          name: 'bench-serve-ring',
          agents,
          topology: 'corl:ring',
          reward: 'corl:vote',
          serve: { ...serve, journal: false },
        },
        groups,
        undefined,
        results,
      );
      await measure(
        'self (TTRL, no waiting)',
        { name: 'bench-serve-self', agents, topology: 'corl:self', reward: 'corl:vote', serve },
        groups,
        undefined,
        results,
      );
      await measure(
        'self, journal off (serve.journal: false)',
        {
          name: 'bench-serve-self',
          agents,
          topology: 'corl:self',
          reward: 'corl:vote',
          serve: { ...serve, journal: false },
        },
        groups,
        undefined,
        results,
      );
      // The journal's fdatasync sets the latency floor; on tmpfs it costs next to nothing, which
      // shows what the service's own work costs.
      if (fs.existsSync('/dev/shm'))
        await measure(
          'ring, journal on tmpfs (/dev/shm)',
          { name: 'bench-serve-ring', agents, topology: 'corl:ring', reward: 'corl:vote', serve },
          groups,
          '/dev/shm',
          results,
        );
    }
    summarize(results);
    const only = process.env.BENCH_SERVE_ONLY;
    // "verl step, two agents at default settings": the transport at a default verl step's scale.
    if (!only || new RegExp(only).test('verl step, two agents at default settings')) await verlStepCase();
  },
};

/** The journal on and off side by side per topology and request size, and the target's verdict. */
function summarize(results: readonly Figures[]): void {
  if (results.length === 0) return;
  const cell = (f: Figures | undefined): string =>
    f ? `${f.perSecond.toFixed(0)} (${f.p50.toFixed(1)} / ${f.p99.toFixed(1)})` : '-';
  const journals = ['on', 'off', 'tmpfs'] as const;
  const rows: string[][] = [['', 'journal on', 'journal off', 'journal on tmpfs']];
  for (const groups of REQUEST_SIZES)
    for (const topology of ['ring', 'self']) {
      const of = journals.map((j) =>
        results.find((r) => r.topology === topology && r.groups === groups && r.journal === j),
      );
      if (of.some((f) => f)) rows.push([`${topology}, ${groups} group(s) per request`, ...of.map(cell)]);
    }
  const width = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  process.stdout.write(
    `summary: completions scored per second (latency p50 / p99 ms) over each case's whole ${SECONDS} s window\n`,
  );
  for (const r of rows)
    process.stdout.write(
      `  ${r
        .map((x, c) => x.padEnd(width[c]!))
        .join('   ')
        .trimEnd()}\n`,
    );
  for (const f of results.filter((r) => r.journal === 'on' && r.groups === 1)) {
    const met = f.perSecond >= TARGET.perSecond && f.p99 < TARGET.p99;
    process.stdout.write(
      `  target (>= ${TARGET.perSecond} completions/s with p99 < ${TARGET.p99} ms over the whole ${SECONDS} s window, journal on, 1 group per request), ${f.topology}: ${met ? 'met' : 'not met'} (${f.perSecond.toFixed(0)}/s, p99 ${f.p99.toFixed(1)} ms; first second ${f.first.perSecond.toFixed(0)}/s, p99 ${f.first.p99.toFixed(1)} ms; load average ${os.loadavg()[0]!.toFixed(2)} on ${os.cpus().length} cores)\n`,
    );
  }
}

/** Seconds per case: BENCH_SERVE_SECONDS when it is a positive number, else 8. */
function benchSeconds(text: string | undefined, warmup: string | undefined): number {
  // The warm-up knob is gone: every request is counted, and the per-second series shows the warm service.
  if (warmup !== undefined && warmup !== '')
    throw new Error(
      'BENCH_SERVE_WARMUP: no longer read (every request is counted); set BENCH_SERVE_SECONDS and read the per-second series for the warm service',
    );
  if (text === undefined || text === '') return 8;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`BENCH_SERVE_SECONDS: expected a positive number, got "${text}"`);
  return n;
}
