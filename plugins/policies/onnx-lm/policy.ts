// `corl:onnx-lm`: a causal language model exported to ONNX in the Hugging Face/optimum layout, run
// by onnxruntime-node with its KV cache. Prompts are left-padded into one batch (attention_mask 0 on
// the padding, position_ids counting from each prompt's first real token), prefilled once per
// distinct prompt, copied to the K rows that continue it, then decoded one token per call with
// present.* fed back as past_key_values.*; rows leave the batch as they finish.
//
// Log-probabilities follow corl:transformer: log softmax(logits / T) of the sampled token over the
// whole vocabulary (before top-p truncation); greedy decoding (T = 0) reports them at T = 1.
// tokenIds include the end token when a completion stopped on it; the text never contains it, nor
// a stop string that ended the completion.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { Completion } from '../../../core/contracts/completion';
import type {
  Policy,
  PolicyDescription,
  SampleRequest,
  SamplingOptions,
  UpdateResult,
} from '../../../core/contracts/policy';
import { CorlError } from '../../../core/errors';
import { leaseCores, type CoreLease } from '../../../core/tensor/threads';
import { writeJsonAtomic } from '../../../core/util/fs';
import { Rng } from '../../../core/util/rng';
import { decodeRows, type DecodeModel, type DecodedRow, type DecodeRow, type RowCheck } from '../decoding/loop';
import { checkSampleCount, perRequest, planRows, stopAt } from '../decoding/requests';
import { readModelFolder, type ModelFolder } from './folder';
import type { OnnxLmOptions } from './options';
import { detectSignature, type Signature } from './signature';
import { NotARegularFile, readUserText } from '../../../core/util/files';

const CHECKPOINT_FILE = 'onnx-lm.json';

/** Most logits floats one prefill call may return (2^25 floats = 128 MiB); larger batches of prompts are split. */
export const PREFILL_LOGITS_BUDGET = 2 ** 25;

const intOf = (v: unknown): number | undefined =>
  Number.isInteger(v) && (v as number) > 0 ? (v as number) : undefined;

/** One sequence to generate. */
interface Row extends DecodeRow {
  readonly prompt: number;
  readonly stop: readonly string[];
}

/** A finished row: what the loop decoded, and its text when a stop string cut it. */
interface Generated extends DecodedRow {
  text?: string;
}

/** A KV cache: per layer, key and value tensors [rows, kv_heads, length, head_dim]. */
type Cache = ort.Tensor[][];

/** A prompt after prefill: the cache that holds it, its row there, and its last position's logits. */
interface Prefilled {
  readonly cache: Cache;
  readonly row: number;
  readonly logits: Float32Array;
}

/** A policy that samples from an ONNX export and cannot train. */
export class OnnxLmPolicy implements Policy {
  private closed = false;

  private constructor(
    private readonly options: OnnxLmOptions,
    readonly folder: ModelFolder,
    private readonly session: ort.InferenceSession,
    readonly signature: Signature,
    private readonly inputTypes: ReadonlyMap<string, string>,
    private readonly lease: CoreLease,
    readonly threads: number,
  ) {}

  /** Read the folder, load the model and check its inputs and outputs (coded errors for each). */
  static async open(options: OnnxLmOptions, baseDir: string): Promise<OnnxLmPolicy> {
    const folder = readModelFolder(options, baseDir);
    const lease = leaseCores();
    const threads = options.threads > 0 ? options.threads : lease.threads();
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(folder.modelFile, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        extra: { session: { intra_op: { allow_spinning: '0' } } },
      });
    } catch (e) {
      lease.release();
      throw new CorlError(
        'CORL_ERR_BACKEND_MODEL',
        `expected onnxruntime to load ${folder.modelFile}, got ${(e as Error).message}`,
        {
          where: 'options.path',
          cause: e,
          hint: 'a model over 2 GB keeps its weights in model.onnx_data next to it: copy both files',
        },
      );
    }
    const meta = (list: readonly ort.InferenceSession.ValueMetadata[] | undefined, names: readonly string[]) =>
      names.map((name) => {
        const m = list?.find((x) => x.name === name);
        return m && m.isTensor ? { name, type: m.type, shape: m.shape } : { name };
      });
    const inputs = meta(session.inputMetadata, session.inputNames);
    try {
      const signature = detectSignature(
        inputs,
        meta(session.outputMetadata, session.outputNames),
        folder.config,
        folder.modelFile,
      );
      return new OnnxLmPolicy(
        options,
        folder,
        session,
        signature,
        new Map(inputs.map((v) => [v.name, v.type ?? 'int64'])),
        lease,
        threads,
      );
    } catch (e) {
      lease.release();
      await session.release();
      throw e;
    }
  }

  describe(): PolicyDescription {
    const s = this.signature;
    const family =
      this.options.family ??
      (typeof this.folder.config.model_type === 'string' ? this.folder.config.model_type : 'onnx');
    return {
      kind: 'corl:onnx-lm',
      family,
      canTrain: false,
      details: {
        model: this.folder.modelFile,
        layers: s.layers,
        kvHeads: s.kvHeads,
        headDim: s.headDim,
        positionIds: s.positionIds,
        useCacheBranch: s.useCacheBranch,
        eosTokenIds: this.folder.eosTokenIds,
        ...(this.folder.maxContext !== undefined ? { maxContext: this.folder.maxContext } : {}),
        threads: this.threads,
      },
    };
  }

  /** Token ids of a prompt as the model sees it (the template applied, special tokens as configured). */
  encodePrompt(prompt: string): number[] {
    const text = this.options.template.split('{prompt}').join(prompt);
    return this.folder.tokenizer.encode(text, { add_special_tokens: this.options.addSpecialTokens }).ids;
  }

  /** Text of generated token ids, without end tokens and special tokens. */
  decode(ids: readonly number[]): string {
    const eos = new Set(this.folder.eosTokenIds);
    return this.folder.tokenizer.decode(
      ids.filter((t) => !eos.has(t)),
      { skip_special_tokens: true },
    );
  }

  async sample(requests: readonly SampleRequest[], options: SamplingOptions): Promise<Completion[][]> {
    if (this.closed)
      throw new CorlError('CORL_ERR_TENSOR_RUNTIME', 'expected an open corl:onnx-lm policy, got a closed one');
    checkSampleCount(options.n);
    const who = (req: SampleRequest, i: number): string =>
      req.id !== undefined ? `problem "${req.id}"` : `request ${i}`;
    requests.forEach((req, i) => {
      if (req.images && req.images.length > 0) {
        throw new CorlError(
          'CORL_ERR_BACKEND_UNSUPPORTED',
          `expected a text-only prompt for corl:onnx-lm, got ${req.images.length} image(s) in ${who(req, i)}`,
          { hint: 'use corl:openai with a vision-language model for problems with images' },
        );
      }
    });
    const plan = planRows(requests.entries(), options, (prompt, i, req) => {
      const ids = this.encodePrompt(prompt);
      if (ids.length === 0)
        throw new CorlError(
          'CORL_ERR_BACKEND_CONTEXT',
          `expected a prompt of at least one token, got none for ${who(req, i)}`,
          {
            where: 'options.template',
          },
        );
      const limit = this.folder.maxContext;
      if (limit !== undefined && ids.length >= limit) {
        throw new CorlError(
          'CORL_ERR_BACKEND_CONTEXT',
          `expected a prompt shorter than the context of ${limit} tokens, got ${ids.length} tokens for ${who(req, i)}`,
          {
            where: 'options.maxContext',
            hint: 'shorten the prompt or raise option maxContext (up to what the model was trained for)',
          },
        );
      }
      return ids;
    });
    const rows: Row[] = plan.rows.map((row) => ({ ...row, rng: new Rng(row.seed) }));
    const generated = rows.length > 0 ? await this.generate(plan.prompts, rows, !!options.tokenStats) : [];
    return perRequest(generated, options.n).map((group) =>
      group.map((row) => ({
        text: row.text ?? this.decode(row.tokens),
        tokenIds: row.tokens,
        logprobs: row.logprobs,
        finishReason: row.finish,
        ...(options.tokenStats ? { entropies: row.entropies, meanLogprobs: row.meanLogprobs } : {}),
      })),
    );
  }

  /** Integer tensor for an id-like input, in the type the model declares. */
  private ints(name: string, values: ArrayLike<number>, dims: readonly number[]): ort.Tensor {
    if (this.inputTypes.get(name) === 'int32') return new ort.Tensor('int32', Int32Array.from(values), dims);
    const data = new BigInt64Array(values.length);
    for (let i = 0; i < values.length; i++) data[i] = BigInt(values[i]!);
    return new ort.Tensor('int64', data, dims);
  }

  /** One model call: ids, positions [B, T], mask [B, P + T], the cache of length P. */
  private async forward(
    B: number,
    T: number,
    ids: ArrayLike<number>,
    positions: ArrayLike<number>,
    mask: ArrayLike<number>,
    cache: Cache | undefined,
  ): Promise<{ logits: Float32Array; V: number; cache: Cache }> {
    const s = this.signature;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: this.ints('input_ids', ids, [B, T]),
      attention_mask: this.ints('attention_mask', mask, [B, mask.length / B]),
    };
    if (s.positionIds) feeds.position_ids = this.ints('position_ids', positions, [B, T]);
    s.pastNames.forEach(([k, v], l) => {
      feeds[k] = cache ? cache[l]![0]! : new ort.Tensor('float32', new Float32Array(0), [B, s.kvHeads, 0, s.headDim]);
      feeds[v] = cache ? cache[l]![1]! : new ort.Tensor('float32', new Float32Array(0), [B, s.kvHeads, 0, s.headDim]);
    });
    if (s.useCacheBranch) feeds.use_cache_branch = new ort.Tensor('bool', Uint8Array.of(cache ? 1 : 0), [1]);
    let res: ort.InferenceSession.ReturnType;
    try {
      res = await this.session.run(feeds);
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_TENSOR_RUNTIME',
        `expected ${this.folder.modelFile} to run on a batch of ${B} × ${T} tokens, got ${(e as Error).message}`,
        { cause: e },
      );
    }
    const logits = res.logits!;
    const dims = logits.dims;
    if (dims.length !== 3 || dims[0] !== B || dims[1] !== T) {
      throw new CorlError(
        'CORL_ERR_BACKEND_MODEL',
        `expected output "logits" of shape [${B}, ${T}, vocab], got [${dims.join(', ')}]`,
        { where: this.folder.modelFile },
      );
    }
    if (logits.type !== 'float32')
      throw new CorlError('CORL_ERR_BACKEND_MODEL', `expected output "logits" of type float32, got ${logits.type}`, {
        where: this.folder.modelFile,
      });
    return {
      logits: logits.data as Float32Array,
      V: dims[2]!,
      cache: s.presentNames.map(([k, v]) => [res[k]!, res[v]!]),
    };
  }

  /**
   * A cache of `parts.length` rows of length `to`: row i is row `parts[i].row` of `parts[i].cache`,
   * right-aligned (left-padded with zeros, which the attention mask hides).
   */
  private assemble(parts: readonly { readonly cache: Cache; readonly row: number }[], to: number): Cache {
    const { kvHeads: H, headDim: dh, layers } = this.signature;
    const out: Cache = [];
    for (let l = 0; l < layers; l++) {
      out.push(
        [0, 1].map((kv) => {
          const dst = new Float32Array(parts.length * H * to * dh);
          parts.forEach(({ cache, row }, i) => {
            const t = cache[l]![kv]!;
            const len = t.dims[2]!;
            const src = t.data as Float32Array;
            const shift = (to - len) * dh;
            for (let h = 0; h < H; h++) {
              const a = (row * H + h) * len * dh;
              dst.set(src.subarray(a, a + len * dh), (i * H + h) * to * dh + shift);
            }
          });
          return new ort.Tensor('float32', dst, [parts.length, H, to, dh]);
        }),
      );
    }
    return out;
  }

  /** End tokens and stop strings end a row (a stop string cut from its text); so does the context. */
  private check(row: Row, tokens: readonly number[], len: number, cutAt: (text: string) => void): RowCheck {
    if (this.folder.eosTokenIds.includes(tokens.at(-1)!)) return 'stop';
    if (row.stop.length > 0) {
      const text = this.decode(tokens);
      const cut = stopAt(text, row.stop);
      if (cut >= 0) {
        cutAt(text.slice(0, cut));
        return 'stop';
      }
    }
    const limit = this.folder.maxContext;
    return limit !== undefined && len + tokens.length >= limit ? 'full' : undefined;
  }

  /**
   * Prompts in prefill groups of consecutive prompts, each group small enough that its logits
   * ([prompts, longest, vocab] floats: exports return every position's) stay within a budget.
   */
  private prefillGroups(prompts: readonly number[][]): number[][] {
    const vocab = intOf(this.folder.config.vocab_size) ?? 32000;
    const groups: number[][] = [];
    let group: number[] = [];
    let longest = 0;
    prompts.forEach((p, u) => {
      const l = Math.max(longest, p.length);
      if (group.length > 0 && (group.length + 1) * l * vocab > PREFILL_LOGITS_BUDGET) {
        groups.push(group);
        group = [];
        longest = 0;
      }
      group.push(u);
      longest = Math.max(longest, p.length);
    });
    groups.push(group);
    return groups;
  }

  /** Prefill the distinct prompts: per prompt, the prefill cache that holds it, its row there, and its last position's logits. */
  private async prefill(prompts: readonly number[][]): Promise<{ filled: Prefilled[]; V: number }> {
    const padId = this.folder.eosTokenIds[0] ?? 0;
    const filled: Prefilled[] = [];
    let V = 0;
    for (const group of this.prefillGroups(prompts)) {
      const G = group.length;
      const Pg = Math.max(...group.map((u) => prompts[u]!.length));
      const ids = new Array<number>(G * Pg).fill(padId);
      const positions = new Array<number>(G * Pg).fill(1);
      const mask = new Array<number>(G * Pg).fill(0);
      group.forEach((u, i) => {
        const p = prompts[u]!;
        const pad = Pg - p.length;
        p.forEach((t, j) => {
          ids[i * Pg + pad + j] = t;
          positions[i * Pg + pad + j] = j;
          mask[i * Pg + pad + j] = 1;
        });
      });
      const pre = await this.forward(G, Pg, ids, positions, mask, undefined);
      V = pre.V;
      group.forEach((u, i) => {
        const at = (i * Pg + Pg - 1) * V;
        filled[u] = { cache: pre.cache, row: i, logits: pre.logits.slice(at, at + V) };
      });
    }
    return { filled, V };
  }

  /** Prefill the distinct prompts, then decode every row until it finishes (the loop of decoding/loop.ts). */
  private async generate(prompts: readonly number[][], rows: readonly Row[], stats: boolean): Promise<Generated[]> {
    const P = Math.max(...prompts.map((p) => p.length));
    const len = rows.map((r) => prompts[r.prompt]!.length);
    const texts: (string | undefined)[] = rows.map(() => undefined);
    let filled: Prefilled[] = [];
    let V = 0;
    // The batch holds the active rows, in order; its cache has length P + steps (left padding included).
    let cache: Cache | undefined;
    let batch: readonly number[] = [];
    let length = P;
    const model: DecodeModel = {
      prefill: async () => {
        ({ filled, V } = await this.prefill(prompts));
        const logits = new Float32Array(prompts.length * V);
        filled.forEach((f, u) => logits.set(f.logits, u * V));
        return { logits, vocab: V, offset: (r) => rows[r]!.prompt * V };
      },
      step: async (active, tokens) => {
        if (!cache) {
          cache = this.assemble(
            active.map((r) => filled[rows[r]!.prompt]!),
            P,
          );
          filled = [];
        } else if (active.length < batch.length) {
          const c = cache;
          const from = batch;
          cache = this.assemble(
            active.map((r) => ({ cache: c, row: from.indexOf(r) })),
            length,
          );
        }
        batch = active;
        const B = batch.length;
        const stepIds = batch.map((r) => tokens[r]!.at(-1)!);
        const stepPos = batch.map((r) => len[r]! + tokens[r]!.length - 1);
        const stepMask = new Array<number>(B * (length + 1)).fill(1);
        batch.forEach((r, i) => stepMask.fill(0, i * (length + 1), i * (length + 1) + P - len[r]!));
        const res = await this.forward(B, 1, stepIds, stepPos, stepMask, cache);
        cache = res.cache;
        length++;
        const at = new Map(batch.map((r, i) => [r, i * V]));
        return { logits: res.logits, vocab: V, offset: (r) => at.get(r)! };
      },
      check: (r, tokens) => this.check(rows[r]!, tokens, len[r]!, (text) => (texts[r] = text)),
    };
    const out = await decodeRows(rows, model, { tokenStats: stats });
    return out.map((o, r) => (texts[r] !== undefined ? { ...o, text: texts[r] } : o));
  }

  async update(): Promise<UpdateResult> {
    throw new CorlError(
      'CORL_ERR_POLICY_CANNOT_TRAIN',
      `expected a trainable policy, got corl:onnx-lm (${this.folder.modelFile}), which only samples`,
      {
        hint: 'train the model with verl, OpenRLHF or TRL and `corl serve`; use corl:onnx-lm with trainer.steps 0 to evaluate it',
      },
    );
  }

  /** Writes what identifies the model; there are no trained weights to save. */
  async save(dir: string): Promise<void> {
    fs.mkdirSync(dir, { recursive: true });
    await writeJsonAtomic(path.join(dir, CHECKPOINT_FILE), {
      kind: 'corl:onnx-lm',
      model: this.folder.modelFile,
      bytes: fs.statSync(this.folder.modelFile).size,
    });
  }

  /** Checks that the checkpoint was written by a policy of the same model file. */
  async load(dir: string): Promise<void> {
    const file = path.join(dir, CHECKPOINT_FILE);
    let saved: { kind?: unknown; model?: unknown; bytes?: unknown };
    try {
      saved = JSON.parse(readUserText(file));
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected ${CHECKPOINT_FILE} written by corl:onnx-lm, got ${e instanceof NotARegularFile ? e.message : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)}`,
        { where: file },
      );
    }
    const bytes = fs.statSync(this.folder.modelFile).size;
    if (saved.kind !== 'corl:onnx-lm' || saved.model !== this.folder.modelFile || saved.bytes !== bytes) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected a corl:onnx-lm checkpoint of ${this.folder.modelFile} (${bytes} bytes), got ${JSON.stringify(saved.kind)} / ${JSON.stringify(saved.model)} (${JSON.stringify(saved.bytes)} bytes)`,
        { where: file },
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lease.release();
    await this.session.release();
  }
}
