/** `corl/tensor`: the tensor engine (graph IR, autodiff, optimizer graphs, ONNX emit and read, onnxruntime sessions). */
export * from '../core/tensor';
