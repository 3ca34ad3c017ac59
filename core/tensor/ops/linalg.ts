// MatMul with optional transposition of the last two axes of either operand (numpy batching) and a
// scale alpha: alpha · op(A) · op(B).
// Plain ONNX MatMul when neither is transposed; otherwise the emitter writes ORT's FusedMatMul
// (training and sampling sessions) or an explicit Transpose (portable models).
import { CorlError } from '../../errors';
import { broadcastShapes, dimEq, formatShape, type Dim } from '../dim';
import type { Tensor } from '../graph';
import { HostTensor, strides } from '../host';
import { unbroadcast } from './grad-util';
import { broadcastIndex } from './kernels';
import type { OpDef, TensorType } from './types';

function mmShape(a: TensorType, b: TensorType, ta: boolean, tb: boolean): Dim[] {
  if (a.shape.length < 2 || b.shape.length < 2)
    throw new CorlError(
      'CORL_ERR_TENSOR_SHAPE',
      `expected MatMul operands of rank ≥ 2, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`,
    );
  if (a.dtype !== 'float32' || b.dtype !== 'float32')
    throw new CorlError('CORL_ERR_TENSOR_SHAPE', `expected float32 MatMul operands, got ${a.dtype} and ${b.dtype}`);
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = ta ? a.shape[ra - 1]! : a.shape[ra - 2]!;
  const ka = ta ? a.shape[ra - 2]! : a.shape[ra - 1]!;
  const kb = tb ? b.shape[rb - 1]! : b.shape[rb - 2]!;
  const n = tb ? b.shape[rb - 2]! : b.shape[rb - 1]!;
  if (!dimEq(ka, kb))
    throw new CorlError(
      'CORL_ERR_TENSOR_SHAPE',
      `expected the inner dimensions of MatMul to agree, got ${formatShape(a.shape)}${ta ? 'ᵀ' : ''} · ${formatShape(b.shape)}${tb ? 'ᵀ' : ''} (${ka} vs ${kb})`,
    );
  const batch = broadcastShapes(a.shape.slice(0, ra - 2), b.shape.slice(0, rb - 2), 'MatMul batch dimensions');
  return [...batch, m, n];
}

export const MATMUL: OpDef = {
  name: 'MatMul',
  infer: ([a, b], attrs) => [{ dtype: 'float32', shape: mmShape(a!, b!, !!attrs.transA, !!attrs.transB) }],
  evaluate: ([a, b], attrs) => {
    const ta = !!attrs.transA;
    const tb = !!attrs.transB;
    const shape = mmShape(a!, b!, ta, tb) as number[];
    const r = shape.length;
    const M = shape[r - 2]!;
    const N = shape[r - 1]!;
    const ra = a!.shape.length;
    const rb = b!.shape.length;
    const K = ta ? a!.shape[ra - 2]! : a!.shape[ra - 1]!;
    const alpha = (attrs.alpha as number | undefined) ?? 1;
    const batch = shape.slice(0, r - 2);
    const nb = batch.reduce((x, y) => x * y, 1);
    const ia = broadcastIndex(a!.shape.slice(0, ra - 2), batch);
    const ib = broadcastIndex(b!.shape.slice(0, rb - 2), batch);
    const A = a!.data as Float64Array;
    const B = b!.data as Float64Array;
    const out = new Float64Array(nb * M * N);
    const sa = a!.shape[ra - 2]! * a!.shape[ra - 1]!;
    const sb = b!.shape[rb - 2]! * b!.shape[rb - 1]!;
    const lda = a!.shape[ra - 1]!;
    const ldb = b!.shape[rb - 1]!;
    for (let q = 0; q < nb; q++) {
      const oa = ia[q]! * sa;
      const ob = ib[q]! * sb;
      for (let i = 0; i < M; i++) {
        for (let j = 0; j < N; j++) {
          let s = 0;
          for (let k = 0; k < K; k++) {
            const x = ta ? A[oa + k * lda + i]! : A[oa + i * lda + k]!;
            const y = tb ? B[ob + j * ldb + k]! : B[ob + k * ldb + j]!;
            s += x * y;
          }
          out[(q * M + i) * N + j] = alpha * s;
        }
      }
    }
    void strides;
    return [new HostTensor('float32', shape, out)];
  },
  grad: ({ g, node, grads, needs }) => {
    const d = grads[0];
    if (!d) return [undefined, undefined];
    const [a, b] = node.inputs as [Tensor, Tensor];
    const ta = !!node.attrs.transA;
    const tb = !!node.attrs.transB;
    const alpha = (node.attrs.alpha as number | undefined) ?? 1;
    let da: Tensor | undefined;
    let db: Tensor | undefined;
    if (needs[0]) {
      if (!ta) da = g.matmul(d, b, { transB: !tb, alpha });
      else da = tb ? g.matmul(b, d, { transA: true, transB: true, alpha }) : g.matmul(b, d, { transB: true, alpha });
      da = unbroadcast(g, da, a);
    }
    if (needs[1]) {
      if (b.rank === 2 && a.rank > 2 && !ta) {
        // A weight shared by every batch row: flatten the batch into one GEMM instead of a batched one plus a reduction.
        const k = a.shape[a.rank - 1]!;
        const n = d.shape[d.rank - 1]!;
        if (typeof k === 'number' && typeof n === 'number') {
          const a2 = g.reshape(a, [-1, k]);
          const d2 = g.reshape(d, [-1, n]);
          db = tb ? g.matmul(d2, a2, { transA: true, alpha }) : g.matmul(a2, d2, { transA: true, alpha });
          return [da, db];
        }
      }
      if (!tb) db = ta ? g.matmul(a, d, { alpha }) : g.matmul(a, d, { transA: true, alpha });
      else db = ta ? g.matmul(d, a, { transA: true, transB: true, alpha }) : g.matmul(d, a, { transA: true, alpha });
      db = unbroadcast(g, db, b);
    }
    return [da, db];
  },
  emit: (ctx, node) => {
    const ta = !!node.attrs.transA;
    const tb = !!node.attrs.transB;
    const alpha = (node.attrs.alpha as number | undefined) ?? 1;
    const [a, b] = node.inputs as [Tensor, Tensor];
    const final = ctx.name(node.outputs[0]!);
    if (ctx.contrib && (ta || tb || alpha !== 1)) {
      return ctx.node(
        'FusedMatMul',
        [ctx.name(a), ctx.name(b)],
        [final],
        {
          transA: { type: 'int', value: ta ? 1 : 0 },
          transB: { type: 'int', value: tb ? 1 : 0 },
          alpha: { type: 'float', value: alpha },
        },
        'com.microsoft',
      );
    }
    const out = [alpha === 1 ? final : ctx.fresh('mm')];
    const scaleOut = () => {
      if (alpha !== 1) ctx.node('Mul', [out[0]!, ctx.float32(alpha)], [final]);
    };
    if (!ta && !tb) {
      ctx.node('MatMul', [ctx.name(a), ctx.name(b)], out);
      return scaleOut();
    }
    const swap = (t: Tensor) => {
      const perm = t.shape.map((_, i) => i);
      [perm[t.rank - 1], perm[t.rank - 2]] = [perm[t.rank - 2]!, perm[t.rank - 1]!];
      const n = ctx.fresh('t');
      ctx.node('Transpose', [ctx.name(t)], [n], { perm: { type: 'ints', value: perm } });
      return n;
    };
    ctx.node('MatMul', [ta ? swap(a) : ctx.name(a), tb ? swap(b) : ctx.name(b)], out);
    scaleOut();
  },
};
