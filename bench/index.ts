// `npm run bench`: every benchmark module in turn, or the ones named on the command line
// (`node dist/bench/index.js answers tensor`). Each prints its own figures; nothing here is a test.
import 'reflect-metadata';
import { installBuiltins } from '../entry/builtins';

installBuiltins();

/** A benchmark: prints figures (throughput, latency, ratios) to stdout. */
export interface Bench {
  readonly name: string;
  readonly description: string;
  run(): Promise<void>;
}

/** Loaded lazily so that one benchmark's dependencies never slow down another's start. */

const BENCHES: Record<string, { description: string; load: () => Bench }> = {
  trainer: { description: 'trainer overhead per step with the test policy', load: () => require('./trainer').bench },
  transformer: {
    description: 'embedded transformer training and sampling tokens/s against a 512³ MatMul',
    load: () => require('./transformer').bench,
  },
  ops: {
    description:
      "per-operator kernel time of the transformer's GRPO gradient graph and decoding step (onnxruntime's profiler)",
    load: () => require('./ops').bench,
  },
  'onnx-lm': {
    description: 'corl:onnx-lm decode tokens/s on generated optimum-layout models',
    load: () => require('./onnx-lm').bench,
  },
  answers: {
    description: 'answer extraction, keys, labels and rewards at paper scale',
    load: () => require('./answers').bench,
  },
  serve: {
    description:
      'corl serve throughput and latency: 8 agents posting 12-completion groups (ring and self), each case a fresh service timed for BENCH_SERVE_SECONDS (8), nothing excluded',
    load: () => require('./serve').bench,
  },
  seeds: {
    description:
      'runs per hour of the default Co-RL config (one at a time, two side by side) and the slip-regime plan’s wall time (minutes: run it on a quiet machine)',
    load: () => require('./seeds').bench,
  },
  noise: {
    description:
      'variance levers on the same seeds of a committed comparison: common random numbers, the step-0 covariate, held-out size × samples (docs/results/noise-slips)',
    load: () => require('./noise').bench,
  },
  python: {
    description: "corl:python's reward overhead per step against corl:vote",
    load: () => require('./python').bench,
  },
  discussion: {
    description: "discussion prompts (roundPrompt) per debate per round against sampling the debate's completion",
    load: () => require('./discussion').bench,
  },
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !(w in BENCHES));
  if (unknown.length) {
    process.stderr.write(
      `CORL_ERR_CLI_USAGE: expected benchmark names among ${Object.keys(BENCHES).join(', ')}, got ${unknown.join(', ')}\n`,
    );
    process.exitCode = 2;
    return;
  }
  const names = wanted.length ? wanted : Object.keys(BENCHES);
  process.stdout.write(
    `corl bench — ${new Date().toISOString()} — node ${process.version}, ${require('node:os').cpus().length} cores\n`,
  );
  for (const name of names) {
    const b = BENCHES[name]!.load();
    process.stdout.write(`\n## ${b.name}: ${b.description}\n`);
    await b.run();
  }
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(String(e?.stack ?? e) + '\n');
    process.exitCode = 1;
  });
}
