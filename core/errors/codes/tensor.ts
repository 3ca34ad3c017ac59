import { defineCodes } from './spec';

export const TENSOR_CODES = defineCodes({
  CORL_ERR_TENSOR_SHAPE: {
    cause:
      'Operands of a tensor-graph operation have shapes or dtypes that do not fit (inner dimensions of a matmul, non-broadcastable operands, a reshape that changes the element count), or a value fed to a compiled graph has the wrong shape.',
    fix: 'check the shapes named in the message; symbolic dimensions (B, T) must agree across inputs',
  },
  CORL_ERR_TENSOR_GRAPH: {
    cause:
      'A tensor graph is malformed: an unknown operator, a tensor from another graph, a duplicate input name, a missing feed, or a gradient requested through an operation that has none.',
    fix: 'build the graph through the Graph builder and feed every declared input; the message names the operator or input',
  },
  CORL_ERR_TENSOR_RUNTIME: {
    cause:
      'onnxruntime refused to load or run a model corl generated (an unsupported operator, out of memory, a failed kernel).',
    fix: 'rerun with fewer sequences per call (miniBatchSize) or report the message; the model that failed is named',
  },
});
