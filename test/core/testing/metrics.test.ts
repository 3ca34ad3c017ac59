import { expect } from 'chai';
import type { MetricsRecord, MetricsSink } from '../../../core/contracts/metrics-sink';
import { definePlugin } from '../../../core/registry/define';
import { metricsChecks, sampleRecords } from '../../../core/testing';
import { fails, passes } from './helpers';

const sink = (name: string, create: () => MetricsSink) =>
  definePlugin({
    manifest: {
      name,
      kind: 'metrics',
      description: 'test sink',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
    },
    create,
  });

describe('core/testing/metrics (the metrics suite catches broken sinks)', () => {
  it('sample records include cohort-wide and evaluation lines', () => {
    expect(sampleRecords().some((r) => r.agent === null)).to.equal(true);
    expect(sampleRecords().some((r) => r.phase === 'eval')).to.equal(true);
  });

  it('a sink that keeps its records passes; one that drops or reorders them is caught', async () => {
    const kept: MetricsRecord[] = [];
    await passes(
      metricsChecks(
        sink('test:memory', () => ({
          write: (r) => {
            kept.push(r);
          },
        })),
        { readBack: () => kept.splice(0) },
      ),
      'keeps what it was sent',
    );
    const dropped: MetricsRecord[] = [];
    await fails(
      metricsChecks(
        sink('test:lossy', () => ({
          write: (r) => {
            if (r.agent !== null) dropped.push(r);
          },
        })),
        { readBack: () => dropped.splice(0) },
      ),
      'keeps what it was sent',
      /read back should be the ones written/,
    );
  });

  it('a sink that throws on a cohort-wide record is caught', async () => {
    await fails(
      metricsChecks(
        sink('test:agentonly', () => ({
          write: (r) => {
            if (r.agent === null) throw new Error('agent required');
          },
        })),
      ),
      'keeps what it was sent',
      /agent required/,
    );
  });
});
