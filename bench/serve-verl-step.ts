// `npm run bench serve`'s verl case: one default-size verl step of two agents (512 prompts x 8
// samples per agent, 8 reward workers per job, up to 1000 run_single calls at once each, the two
// jobs at once) against `corl serve` at its default settings, the shipped verl adapter driven by
// the test's verl driver (test/integrations/py/trainers.py under Debian's python3 with aiohttp).
// Figures: seconds from the drivers' start (16 worker processes spawned, the adapter loaded in
// each) to the last reward, the service's peak open connections, its peak resident memory, and
// what the service refused (nothing, when the transport holds).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixture, writeConfig } from '../test/fixtures/configs';
import { checkPython, metric, python, ringConfig, startService } from '../test/integrations/serve-process';
import { AGENTS, verlJob, verlStep } from '../test/integrations/verl-step';

/** Peak resident memory of a process in MiB (Linux /proc VmHWM), undefined elsewhere. */
function peakRssMiB(pid: number | undefined): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Run the case and print its figures. */
export async function verlStepCase(): Promise<void> {
  checkPython();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-verl-'));
  const config = ringConfig(
    { use: 'test:length-vote', options: { penalty: 0.001 } },
    {},
    {
      plugins: [fixture('length-vote.js')],
    },
  );
  const service = await startService(writeConfig(dir, 'serve.json', config), path.join(dir, 'journal.jsonl'));
  try {
    const plan = verlStep(38);
    const t0 = performance.now();
    const results = await Promise.all(
      AGENTS.map((agent, a) => python('trainers.py', verlJob(service.url, agent, plan[a]!, 100 + a), dir, agent)),
    );
    const seconds = (performance.now() - t0) / 1000;
    const rewards = results.reduce((n, r) => n + (r.results[0] as unknown[]).filter((x) => x !== null).length, 0);
    const errors = results.flatMap((r) => r.errors as string[]);
    const text = await (await fetch(`${service.url}/metrics`)).text();
    const failed = [...text.matchAll(/^corl_serve_requests_total\{route="([^"]+)",status="(4\d\d|5\d\d)"\} (\d+)/gm)];
    // 499: a wait the client closed to ask again with newly accepted samples (by design, takes nothing).
    const refused = failed.filter((m) => m[2] !== '499').map((m) => `${m[1]} ${m[2]}: ${m[3]}`);
    const reissued = failed.filter((m) => m[2] === '499').reduce((n, m) => n + Number(m[3]), 0);
    const peak = await metric(service.url, 'corl_serve_open_connections_peak');
    const rss = peakRssMiB(service.proc.pid);
    console.log(
      [
        'verl step, two agents at default settings (512 prompts x 8 samples each, 8 reward workers per job, 1000 concurrent run_single each):',
        `  rewards: ${rewards} of 8192${errors.length ? `; driver errors: ${errors.join('; ')}` : ''}`,
        `  time to score the whole step: ${seconds.toFixed(1)} s (from the drivers' start: 16 worker processes spawned, each sample after a 0-2 s delay)`,
        `  peak open connections: ${peak}`,
        `  service peak resident memory: ${rss === undefined ? 'unknown' : `${rss.toFixed(0)} MiB`}`,
        `  refused or failed requests: ${refused.length ? refused.join(', ') : 'none'} (waits closed by the client to ask again for more samples, 499: ${reissued})`,
      ].join('\n'),
    );
  } finally {
    await service.stop('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
