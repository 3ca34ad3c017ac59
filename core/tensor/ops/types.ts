import type { Shape } from '../dim';
import type { Graph, Node, Tensor } from '../graph';
import type { DType, HostTensor } from '../host';
import type { OnnxAttribute } from '../onnx/model';

/** Operator attributes (plain data). */
export type Attrs = Readonly<Record<string, unknown>>;

/** What shape inference works on. */
export interface TensorType {
  readonly dtype: DType;
  readonly shape: Shape;
}

/** What a gradient rule receives. */
export interface GradContext {
  /** The graph to add backward nodes to. */
  readonly g: Graph;
  /** The forward node. */
  readonly node: Node;
  /** ∂loss/∂output for each output (undefined: that output does not reach the loss). */
  readonly grads: readonly (Tensor | undefined)[];
  /** Whether each input needs a gradient. */
  readonly needs: readonly boolean[];
}

/** What an operator's ONNX emission receives. */
export interface EmitContext {
  /** The ONNX value name of a tensor. */
  name(t: Tensor): string;
  /** A fresh intermediate value name. */
  fresh(hint: string): string;
  /** Append an ONNX node. */
  node(
    op: string,
    inputs: readonly string[],
    outputs: readonly string[],
    attributes?: Record<string, OnnxAttribute>,
    domain?: string,
  ): void;
  /** Whether onnxruntime contrib operators (com.microsoft) may be used. */
  readonly contrib: boolean;
  /** Name of an int64 constant (shared per value list). */
  int64s(values: readonly number[], scalar?: boolean): string;
  /** Name of a float32 scalar constant. */
  float32(value: number): string;
}

/** One operator: shape inference, a float64 host kernel, a gradient rule and its ONNX form. */
export interface OpDef {
  readonly name: string;
  infer(inputs: readonly TensorType[], attrs: Attrs): TensorType[];
  evaluate(inputs: readonly HostTensor[], attrs: Attrs): HostTensor[];
  /** Gradients for the inputs; absent when the operator is not differentiable. */
  grad?(ctx: GradContext): (Tensor | undefined)[];
  emit(ctx: EmitContext, node: Node): void;
}
