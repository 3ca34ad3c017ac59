// The tensor engine: typed graphs, reverse-mode autodiff, a float64 reference evaluator, an ONNX
// emitter and onnxruntime sessions. See docs/algorithms/engine.md.
export { gradients } from './autodiff';
export { broadcastShapes, dimEq, formatShape, type Dim, type Shape } from './dim';
export { Graph, Tensor, type Node } from './graph';
export { HostTensor, type DType, type TensorArray } from './host';
export { emitOnnx, OPSET, type EmitOptions, type EmittedModel } from './onnx/emit';
export { readModel, type ReadModel } from './onnx/read';
export {
  adamwInputs,
  adamwScalars,
  adamwUpdate,
  clipByGlobalNorm,
  globalNorm,
  learningRate,
  type AdamWOptions,
  type AdamWScalars,
  type Schedule,
} from './optim';
export { evaluate } from './reference';
export { compile, GraphSession, type CompiledGraph, type Feed, type SessionOptions } from './session';
export { availableCores, leaseCores, type CoreLease } from './threads';
