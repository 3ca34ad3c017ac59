// `npm run bench serve`: `corl serve` under load. The service runs as a child process (the real
// `node bin/corl.js serve`, journal and fdatasync included) on a loopback port; this process plays 8
// agents posting POST /v1/groups concurrently, each request one 12-completion group or a micro-batch
// of 8 such groups, of about 600-character math completions ending in a boxed answer. Two configs: a ring (Co-RL: each
// agent waits for its peer's answers of the same step) and corl:self (TTRL: no waiting).
// Figures: completions scored per second, request latency p50/p99 as the agents see it, requests.
// Each config also runs with the journal off (serve.journal: false), side by side; another keeps the journal on tmpfs, separating the disk's fdatasync from the service's work.
// A summary at the end puts the journal on, off and on tmpfs side by side, and says whether the
// journal-on target (>= 20k completions/s, p99 < 20 ms, one group per request) was met, with the load.
// Profile the service with BENCH_SERVE_PROF=<dir> (passes --cpu-prof --cpu-prof-dir=<dir>); run only
// some cases with BENCH_SERVE_ONLY=<regular expression> over "<label>, <n> group(s) per request".
// BENCH_SERVE_WARMUP=<n> sets the uncounted warm-up requests per agent (default 5): V8 is still
// optimising the request path after 40 requests, so a larger n measures the warm service a long run sees.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Rng } from '../core/util/rng';
import type { Bench } from './index';

const ROOT = path.resolve(__dirname, '..', '..');
const AGENTS = 8;
const K = 12;
/** Groups per request: one prompt's group (a trainer posting as it goes), or a micro-batch of 8 prompts. */
const REQUEST_SIZES = [1, 8];
const WARMUP_STEPS = warmupSteps(process.env.BENCH_SERVE_WARMUP);
const STEPS = 60;

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

/** Every request body of one agent, built before timing starts (distinct texts: no cache hits across agents). */
function bodies(agent: number, steps: number, groups: number): string[] {
  const rng = new Rng(1000 + agent);
  return Array.from({ length: steps }, (_, step) =>
    JSON.stringify({
      agent: `agent${agent}`,
      step,
      groups: Array.from({ length: groups }, (_, g) => ({
        id: `s${step}-g${g}`,
        prompt: `Problem ${g} of step ${step}`,
        completions: Array.from({ length: K }, () => completionText(rng, step * groups + g)),
      })),
    }),
  );
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

/** One case's figures, for the side-by-side summary. */
interface Figures {
  readonly topology: string;
  readonly journal: 'on' | 'off' | 'tmpfs';
  readonly groups: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** The target of the journal-on service (issue 14): at 8 agents and one 12-completion group per request. */
const TARGET = { perSecond: 20_000, p99: 20 };

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
  const agent = new http.Agent({ keepAlive: true, maxSockets: AGENTS });
  try {
    const url = new URL(service.url);
    const steps = STEPS * (groups === 1 ? 4 : 1);
    const all = Array.from({ length: AGENTS }, (_, a) => bodies(a, WARMUP_STEPS + steps, groups));
    const latencies: number[] = [];
    let failures = 0;
    const runAgent = async (a: number, from: number, to: number, record: boolean): Promise<void> => {
      for (let s = from; s < to; s++) {
        const t0 = performance.now();
        const r = await postJson(agent, url, all[a]![s]!);
        const ms = performance.now() - t0;
        if (r.status !== 200) {
          failures++;
          if (failures === 1) process.stderr.write(`first failure: HTTP ${r.status} ${r.text.slice(0, 200)}\n`);
        }
        if (record) latencies.push(ms);
      }
    };
    await Promise.all(Array.from({ length: AGENTS }, (_, a) => runAgent(a, 0, WARMUP_STEPS, false)));
    const serviceCpu0 = cpuSeconds(service.proc.pid);
    const clientCpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: AGENTS }, (_, a) => runAgent(a, WARMUP_STEPS, WARMUP_STEPS + steps, true)));
    const seconds = (performance.now() - t0) / 1000;
    const clientCpu = process.cpuUsage(clientCpu0);
    const serviceCpu1 = cpuSeconds(service.proc.pid);
    latencies.sort((x, y) => x - y);
    const completions = AGENTS * steps * groups * K;
    results.push({
      topology: (config.topology as string).replace(/^corl:/, ''),
      journal: journalOff ? 'off' : journalDir === os.tmpdir() ? 'on' : 'tmpfs',
      groups,
      perSecond: completions / seconds,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
    });
    process.stdout.write(
      `${label}, ${groups} group(s) per request: ${AGENTS} agents x ${steps} requests of ${groups} x ${K} completions (${(all[0]![0]!.length / 1024).toFixed(1)} KiB each; ${WARMUP_STEPS} warm-up requests per agent not counted)\n`,
    );
    process.stdout.write(
      `  requests ${latencies.length} (${failures} failed), completions ${completions}, ${seconds.toFixed(2)} s\n`,
    );
    process.stdout.write(`  completions scored per second: ${(completions / seconds).toFixed(0)}\n`);
    process.stdout.write(
      `  latency ms: p50 ${quantile(latencies, 0.5).toFixed(2)}, p99 ${quantile(latencies, 0.99).toFixed(2)}, max ${latencies[latencies.length - 1]!.toFixed(2)}\n`,
    );
    // Both run on this machine: the client's share shows whether it, rather than the service, is the limit.
    const share = (cpu: number): string => `${((cpu / seconds) * 100).toFixed(0)}%`;
    process.stdout.write(
      `  cpu of the timed part, as a share of one core: service ${serviceCpu0 === undefined || serviceCpu1 === undefined ? 'unknown' : `${share(serviceCpu1 - serviceCpu0)} (${(((serviceCpu1 - serviceCpu0) / latencies.length) * 1e6).toFixed(0)} µs per request)`}, bench client ${share((clientCpu.user + clientCpu.system) / 1e6)} (${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)})\n`,
    );
    const prom = await new Promise<string>((resolve, reject) =>
      http
        .get(`${service.url}/metrics`, { agent }, (res) => {
          let t = '';
          res.on('data', (c) => {
            t += c;
          });
          res.on('end', () => resolve(t));
        })
        .on('error', reject),
    );
    const value = (series: string): number =>
      Number(
        prom
          .split('\n')
          .find((l) => l.startsWith(`${series} `))
          ?.split(' ')[1] ?? NaN,
      );
    if (journalOff) return;
    const syncs = value('corl_serve_journal_sync_seconds_count');
    const records = value('corl_serve_journal_records_total');
    process.stdout.write(
      `  journal (warm-up included): ${syncs} fdatasyncs, mean ${((value('corl_serve_journal_sync_seconds_sum') / syncs) * 1000).toFixed(2)} ms, ${(records / syncs).toFixed(1)} records per sync\n`,
    );
  } finally {
    agent.destroy();
    const exited = new Promise((r) => service.proc.once('exit', r));
    service.proc.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
  process.stdout.write('summary: completions scored per second (latency p50 / p99 ms)\n');
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
      `  target (>= ${TARGET.perSecond} completions/s with p99 < ${TARGET.p99} ms, journal on, 1 group per request), ${f.topology}: ${met ? 'met' : 'not met'} (${f.perSecond.toFixed(0)}/s, p99 ${f.p99.toFixed(1)} ms; load average ${os.loadavg()[0]!.toFixed(2)} on ${os.cpus().length} cores)\n`,
    );
  }
}

/** Uncounted warm-up requests per agent: BENCH_SERVE_WARMUP when it is a whole number, else 5. */
function warmupSteps(text: string | undefined): number {
  if (text === undefined || text === '') return 5;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`BENCH_SERVE_WARMUP: expected a whole number, got "${text}"`);
  return n;
}
