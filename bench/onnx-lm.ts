// Speed of corl:onnx-lm (issue 6) on generated optimum-layout models: decode tokens/s of batched
// KV-cached sampling through the policy's real path (left-padded prefill, one model call per new
// token, present → past), for the tiny test model and a wider one (d_model 128, 4 layers, 8 query
// heads over 4 KV heads), batch 1 and 16, one thread. Figures only; nothing here is a test.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openTinyLm, writeTinyLm, type TinyLmSpec } from '../test/fixtures/onnx-lm';
import type { Bench } from './index';

const NEW = 32;

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function measure(dir: string, rows: number): Promise<{ tokensPerSecond: number; msPerCall: number }> {
  const policy = await openTinyLm(dir, { eosTokenIds: [] });
  try {
    const requests = Array.from({ length: rows }, (_, i) => ({ prompt: `abc ${i}+${i}=` }));
    const opts = { n: 1, temperature: 1, topP: 1, maxTokens: NEW, seed: 1 };
    // Every token is generated: no end token, so each row runs exactly NEW tokens.
    const runs: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t0 = performance.now();
      const out = await policy.sample(requests, opts);
      const ms = performance.now() - t0;
      if (i > 0) runs.push(ms);
      const tokens = out.reduce((a, g) => a + g[0]!.tokenIds.length, 0);
      if (tokens !== rows * NEW) throw new Error(`expected ${rows * NEW} tokens, got ${tokens}`);
    }
    const ms = median(runs);
    return { tokensPerSecond: (rows * NEW) / (ms / 1000), msPerCall: ms / NEW };
  } finally {
    await policy.close();
  }
}

export const bench: Bench = {
  name: 'onnx-lm',
  description: 'corl:onnx-lm decode tokens/s on generated optimum-layout models (1 thread)',
  async run() {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-onnx-lm-'));
    try {
      const models: [string, TinyLmSpec][] = [
        ['tiny (test model: d 32, 2 layers, 4/2 heads)', { maxPositions: 128 }],
        ['wider (d 128, 4 layers, 8/4 heads)', { layers: 4, heads: 8, kvHeads: 4, headDim: 16, maxPositions: 128 }],
      ];
      for (const [label, spec] of models) {
        const dir = writeTinyLm(path.join(tmp, label.split(' ')[0]!), spec);
        for (const rows of [1, 16]) {
          const r = await measure(dir, rows);
          process.stdout.write(
            `${label}, batch ${rows}: ${r.tokensPerSecond.toFixed(0)} tokens/s, ${r.msPerCall.toFixed(2)} ms per decode step (${NEW} new tokens)\n`,
          );
        }
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  },
};
