import { expect } from 'chai';
import { Counter, Histogram } from '../../../core/serve/prom';

describe('serve/prom: Prometheus text exposition', () => {
  it('renders counters with escaped labels', () => {
    const c = new Counter('x_total', 'things');
    c.inc({ route: '/a' });
    c.inc({ route: '/a' }, 2);
    c.inc({ route: 'q"uote\\' });
    expect(c.render()).to.equal(
      '# HELP x_total things\n# TYPE x_total counter\nx_total{route="/a"} 3\nx_total{route="q\\"uote\\\\"} 1',
    );
  });

  it('renders cumulative histogram buckets, sum and count', () => {
    const h = new Histogram('lat_seconds', 'latency', [0.1, 1]);
    for (const v of [0.05, 0.5, 0.5, 2]) h.observe(v);
    expect(h.render().split('\n').slice(2)).to.deep.equal([
      'lat_seconds_bucket{le="0.1"} 1',
      'lat_seconds_bucket{le="1"} 3',
      'lat_seconds_bucket{le="+Inf"} 4',
      'lat_seconds_sum 3.05',
      'lat_seconds_count 4',
    ]);
  });
});
