// Teacher-forced scoring with a saved corl:transformer checkpoint: the logits of the token that
// would follow a text, read in one forward pass (no sampling, no optimizer, no worker). This is
// what a learned verifier needs (the probability of a verdict token after a problem and a
// solution); the checkpoint alone names the architecture and tokenizer, and is verified (sizes,
// SHA-256s, shapes) by the same loader the policy uses.
import * as path from 'node:path';
import { CorlError } from '../../../core/errors';
import { compile, GraphSession } from '../../../core/tensor/session';
import { paramSpecs, type Architecture, type ParamSpec } from './architecture';
import { loadCheckpoint } from './checkpoint';
import { buildPrefillGraph } from './graphs';
import { CharTokenizer, END } from './tokenizer';
import { readUserText } from '../../../core/util/files';

/** A checkpoint opened for scoring. */
export class CheckpointScorer {
  private constructor(
    readonly dir: string,
    readonly family: string,
    readonly architecture: Architecture,
    readonly tokenizer: CharTokenizer,
    private readonly specs: readonly ParamSpec[],
    private readonly params: readonly Float32Array[],
    private readonly session: GraphSession,
  ) {}

  /** Open and verify the checkpoint in `dir` (CORL_ERR_POLICY_CHECKPOINT when it is missing or corrupt). */
  static async open(dir: string, threads = 1): Promise<CheckpointScorer> {
    const sideFile = path.join(dir, 'corl.json');
    let side: { architecture?: Architecture; tokenizer?: { alphabet: string; tokens: string[]; lowercase: boolean } };
    try {
      side = JSON.parse(readUserText(sideFile)) as typeof side;
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected a corl:transformer checkpoint (corl.json, model.onnx) in ${dir}, got ${(e as Error).message}`,
        { where: sideFile, hint: 'give the folder `corl pretrain --out` wrote' },
      );
    }
    if (!side?.architecture || !side.tokenizer) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        'expected an architecture and a tokenizer in corl.json, got none',
        {
          where: sideFile,
        },
      );
    }
    const tokenizer = new CharTokenizer(side.tokenizer);
    const architecture = side.architecture;
    const specs = paramSpecs(architecture);
    // The loader compares the sidecar with itself here: what it checks is the files' integrity.
    const data = await loadCheckpoint(dir, specs, { architecture, tokenizer: tokenizer.describe() });
    if (architecture.vocab !== tokenizer.size) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected a vocabulary of ${tokenizer.size} (the tokenizer's), got ${architecture.vocab}`,
        { where: sideFile },
      );
    }
    const built = buildPrefillGraph(architecture, specs);
    const session = await GraphSession.create(compile(built.graph, { outputs: [built.outputs[0]!] }), { threads });
    return new CheckpointScorer(dir, data.family, architecture, tokenizer, specs, data.params, session);
  }

  /** Token ids the model reads for `text`: the end token, then the text. */
  encode(text: string): number[] {
    return [END, ...this.tokenizer.encode(text)];
  }

  /**
   * Logits of the next token after each sequence of ids (each at most `architecture.context` long,
   * starting with the end token), in one batched forward pass. Rows are right-padded: under causal
   * attention the padding never reaches a row's last real position.
   */
  async nextLogits(rows: readonly (readonly number[])[]): Promise<Float32Array[]> {
    if (rows.length === 0) return [];
    const C = this.architecture.context;
    const V = this.architecture.vocab;
    const T = Math.max(...rows.map((r) => r.length));
    if (T > C || rows.some((r) => r.length === 0)) {
      throw new CorlError(
        'CORL_ERR_TENSOR_GRAPH',
        `expected sequences of 1 to ${C} tokens (the checkpoint's context), got ${rows.find((r) => r.length === 0 || r.length > C)!.length}`,
      );
    }
    const logits = await this.forward(rows, T);
    return rows.map((r, i) => logits.slice((i * T + r.length - 1) * V, (i * T + r.length) * V));
  }

  /**
   * Teacher-forced log-probabilities: for each row of ids (at most `architecture.context` long,
   * starting with the end token), log p(ids[t] | ids[<t]) for every t ≥ `from[i]` (≥ 1), in one
   * batched forward pass.
   */
  async tokenLogprobs(rows: readonly (readonly number[])[], from: readonly number[]): Promise<number[][]> {
    if (rows.length === 0) return [];
    const C = this.architecture.context;
    const V = this.architecture.vocab;
    const T = Math.max(...rows.map((r) => r.length));
    if (T > C || rows.some((r, i) => r.length < 2 || !(from[i]! >= 1 && from[i]! < r.length))) {
      throw new CorlError(
        'CORL_ERR_TENSOR_GRAPH',
        `expected sequences of 2 to ${C} tokens (the checkpoint's context) with a first target inside, got lengths ${JSON.stringify(rows.map((r) => r.length))} from ${JSON.stringify(from)}`,
      );
    }
    const logits = await this.forward(rows, T);
    return rows.map((r, i) => {
      const out: number[] = [];
      for (let t = from[i]!; t < r.length; t++) {
        const o = (i * T + t - 1) * V;
        let m = -Infinity;
        for (let v = 0; v < V; v++) m = Math.max(m, logits[o + v]!);
        let z = 0;
        for (let v = 0; v < V; v++) z += Math.exp(logits[o + v]! - m);
        out.push(logits[o + r[t]!]! - m - Math.log(z));
      }
      return out;
    });
  }

  private async forward(rows: readonly (readonly number[])[], T: number): Promise<Float32Array> {
    const ids = new Int32Array(rows.length * T).fill(END);
    rows.forEach((r, i) => ids.set(r, i * T));
    const feeds: Record<string, { data: Float32Array | Int32Array; dims: readonly number[] }> = {
      ids: { data: ids, dims: [rows.length, T] },
    };
    this.specs.forEach((s, i) => {
      feeds[s.name] = { data: this.params[i]!, dims: s.shape };
    });
    const out = await this.session.run(feeds, ['logits']);
    return out.logits!.data as Float32Array;
  }

  /** Release the onnxruntime session. */
  async close(): Promise<void> {
    await this.session.close();
  }
}
