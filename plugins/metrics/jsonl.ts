import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricsRecord, MetricsSink } from '../../core/contracts/metrics-sink';
import { definePlugin } from '../../core/plugins/define';

interface JsonlOptions {
  /** File to append to (relative to the config's folder). */
  path: string;
}

/** Appends every metrics record to an extra JSONL file (the run's own metrics.jsonl is always written). */
export const jsonlSink = definePlugin({
  manifest: {
    name: 'corl:jsonl',
    kind: 'metrics',
    description: 'Append metrics records to an extra JSONL file',
    corl: '^0.1.0',
    options: {
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string', minLength: 1, description: 'file to append to, relative to the config file' } },
      additionalProperties: false,
    },
  },
  create(options: JsonlOptions, ctx): MetricsSink {
    const file = path.resolve(ctx.baseDir, options.path);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return {
      write(record: MetricsRecord) {
        fs.appendFileSync(file, JSON.stringify(record) + '\n');
      },
    };
  },
});
