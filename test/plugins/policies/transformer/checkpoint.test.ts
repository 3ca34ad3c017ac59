import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registrar } from '../../../../core/registry/container';
import * as ort from 'onnxruntime-node';
import { instantiate } from '../../../../core/registry/instantiate';
import { PluginRegistry } from '../../../../core/registry/registry';
import { register } from '../../../../plugins/policies';
import { tinyPolicy, transformerOptions } from '../../../fixtures/transformer';

const sampling = { n: 2, temperature: 1, topP: 1, maxTokens: 6, seed: 7 };
const loss = { type: 'bnpo' as const, clipLow: 0.2, clipHigh: 0.2, beta: 0.1, maxCompletionLength: 6 };

async function trained(seed: number) {
  const p = tinyPolicy({ optimizer: { lr: 1e-2 } }, seed);
  const [g] = await p.sample([{ prompt: '4+4=' }], sampling);
  await p.update({
    samples: g!.map((c, k) => ({ prompt: '4+4=', completion: c, advantage: k ? 1 : -1 })),
    loss,
    temperature: 1,
    step: 0,
    totalSteps: 2,
  });
  return p;
}

const bytes = (dir: string) =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(dir, f)).toString('base64')]),
  );

describe('plugins/policies/transformer/checkpoint', function () {
  this.timeout(120000);
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-ckpt-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('save → load is exact: weights, optimizer state, reference, counters and what the model does next', async () => {
    const a = await trained(1);
    const b = tinyPolicy({ optimizer: { lr: 1e-2 } }, 2);
    try {
      await a.save(path.join(tmp, 'a'));
      expect(fs.readdirSync(path.join(tmp, 'a')).sort()).to.deep.equal([
        'corl.json',
        'model.onnx',
        'optimizer.bin',
        'reference.bin',
      ]);
      await b.load(path.join(tmp, 'a'));
      await b.save(path.join(tmp, 'b'));
      expect(bytes(path.join(tmp, 'b'))).to.deep.equal(bytes(path.join(tmp, 'a')));
      expect(b.describe().details).to.include({ optimizerSteps: 1, updates: 1 });
      // The next sample and the next update are the same too.
      const sa = await a.sample([{ prompt: '1+1=' }], sampling);
      const sb = await b.sample([{ prompt: '1+1=' }], sampling);
      expect(sb).to.deep.equal(sa);
      const batch = {
        samples: sa[0]!.map((c, k) => ({ prompt: '1+1=', completion: c, advantage: k ? -1 : 1 })),
        loss,
        temperature: 1,
        step: 1,
        totalSteps: 2,
      };
      const ua = await a.update(batch);
      const ub = await b.update(batch);
      expect(ub).to.deep.equal(ua);
      expect(b.weights().map((w) => Array.from(w))).to.deep.equal(a.weights().map((w) => Array.from(w)));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('model.onnx is a standard inference model that plain onnxruntime runs', async () => {
    const a = await trained(3);
    try {
      await a.save(tmp);
      const s = await ort.InferenceSession.create(path.join(tmp, 'model.onnx'));
      const ids = a.encodePrompt('2+2=');
      const r = await s.run({
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
      });
      expect(r.logits!.dims).to.deep.equal([1, ids.length, a.tokenizer.size]);
      const [g] = await a.sample([{ prompt: '2+2=', overrides: { temperature: 0 } }], {
        ...sampling,
        n: 1,
        maxTokens: 1,
      });
      const last = Array.from(
        (r.logits!.data as Float32Array).subarray((ids.length - 1) * a.tokenizer.size, ids.length * a.tokenizer.size),
      );
      expect(g![0]!.tokenIds[0]).to.equal(last.indexOf(Math.max(...last)));
      await s.release();
    } finally {
      await a.close();
    }
  });

  it('a corrupt, truncated, missing or mismatched checkpoint is a coded error and loads nothing', async () => {
    const a = await trained(4);
    const b = tinyPolicy({}, 5);
    try {
      await a.save(tmp);
      const before = b.weights().map((w) => Array.from(w));
      const expectFail = async (re: RegExp) => {
        await b.load(tmp).then(
          () => expect.fail('loaded'),
          (e) => expect(String(e)).to.match(re),
        );
        expect(b.weights().map((w) => Array.from(w))).to.deep.equal(before);
      };
      const model = path.join(tmp, 'model.onnx');
      const good = fs.readFileSync(model);
      const flipped = Buffer.from(good);
      flipped[flipped.length - 10]! ^= 0xff;
      fs.writeFileSync(model, flipped);
      await expectFail(/CORL_ERR_POLICY_CHECKPOINT.*model.onnx.*another digest/);
      fs.writeFileSync(model, good);
      const opt = path.join(tmp, 'optimizer.bin');
      const o = fs.readFileSync(opt);
      fs.writeFileSync(opt, o.subarray(0, o.length - 4));
      await expectFail(/CORL_ERR_POLICY_CHECKPOINT.*optimizer.bin.*bytes/);
      fs.writeFileSync(opt, o);
      fs.writeFileSync(path.join(tmp, 'corl.json'), '{ not json');
      await expectFail(/CORL_ERR_POLICY_CHECKPOINT.*corl.json.*readable JSON/);
      await b.load(path.join(tmp, 'nowhere')).then(
        () => expect.fail(),
        (e) => expect(String(e)).to.match(/CORL_ERR_POLICY_CHECKPOINT/),
      );
      await a.save(tmp);
      const wide = tinyPolicy({ dModel: 32 });
      await wide.load(tmp).then(
        () => expect.fail(),
        (e) => expect(String(e)).to.match(/CORL_ERR_POLICY_CHECKPOINT.*architecture.dModel 32.*got 16/),
      );
      await wide.close();
      const other = tinyPolicy({ tokenizer: { alphabet: '0123456789+-=' } });
      await other.load(tmp).then(
        () => expect.fail(),
        (e) => expect(String(e)).to.match(/CORL_ERR_POLICY_CHECKPOINT.*architecture.vocab/),
      );
      await other.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the checkpoint option loads a saved model when the plugin is created', async () => {
    const a = await trained(6);
    try {
      await a.save(path.join(tmp, 'base'));
      const registry = new PluginRegistry();
      await register(registrar(registry, { builtin: true }).api);
      const options = transformerOptions({
        dModel: 16,
        layers: 1,
        heads: 2,
        context: 32,
        worker: false,
        threads: 1,
        tokenizer: { alphabet: '0123456789+-=;\\boxed{} ' },
        checkpoint: 'base',
      }) as unknown as Record<string, unknown>;
      const p = await instantiate('policy', { use: 'corl:transformer', options }, { registry, seed: 99, baseDir: tmp });
      const sa = await a.sample([{ prompt: '3=' }], sampling);
      expect(await p.sample([{ prompt: '3=' }], sampling)).to.deep.equal(sa);
      await p.close!();
      const missing = { ...options, checkpoint: 'absent' };
      await instantiate(
        'policy',
        { use: 'corl:transformer', options: missing },
        { registry, seed: 99, baseDir: tmp },
      ).then(
        () => expect.fail(),
        (e) => expect(String(e)).to.match(/CORL_ERR_POLICY_CHECKPOINT/),
      );
    } finally {
      await a.close();
    }
  });

  it('checkpointOptimizer: false takes only the weights (fresh AdamW, zeroed counters, no reference)', async () => {
    const a = await trained(4);
    const registry = new PluginRegistry();
    await register(registrar(registry, { builtin: true }).api);
    try {
      await a.save(path.join(tmp, 'base'));
      const options = {
        ...transformerOptions({
          dModel: 16,
          layers: 1,
          heads: 2,
          context: 32,
          worker: false,
          threads: 1,
          tokenizer: { alphabet: '0123456789+-=;\\boxed{} ' },
          optimizer: { lr: 1e-2 },
        }),
        checkpoint: 'base',
        checkpointOptimizer: false,
      } as unknown as Record<string, unknown>;
      const p = await instantiate('policy', { use: 'corl:transformer', options }, { registry, seed: 99, baseDir: tmp });
      const full = await instantiate(
        'policy',
        { use: 'corl:transformer', options: { ...options, checkpointOptimizer: true } },
        { registry, seed: 99, baseDir: tmp },
      );
      try {
        expect(p.describe().details).to.include({ optimizerSteps: 0, updates: 0, pretrainSteps: 0 });
        expect(full.describe().details).to.include({ optimizerSteps: 1, updates: 1 });
        // Same weights: the same samples.
        expect(await p.sample([{ prompt: '3=' }], sampling)).to.deep.equal(
          await a.sample([{ prompt: '3=' }], sampling),
        );
        await p.save(path.join(tmp, 'fresh'));
        expect(fs.readdirSync(path.join(tmp, 'fresh')).sort()).to.deep.equal([
          'corl.json',
          'model.onnx',
          'optimizer.bin',
        ]);
        const zeros = fs.readFileSync(path.join(tmp, 'fresh', 'optimizer.bin'));
        expect(zeros.every((b) => b === 0)).to.equal(true);
        expect(fs.readFileSync(path.join(tmp, 'fresh', 'model.onnx'))).to.deep.equal(
          fs.readFileSync(path.join(tmp, 'base', 'model.onnx')),
        );
      } finally {
        await p.close!();
        await full.close!();
      }
    } finally {
      await a.close();
    }
  });
});
