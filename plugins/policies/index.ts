import { registerAll } from '../../core/registry/define';
import { onnxLmPolicy } from './onnx-lm';
import { openaiPolicy } from './openai';
import { transformerPolicy } from './transformer';

/** Registers the built-in policies. */
export const register = registerAll(transformerPolicy, openaiPolicy, onnxLmPolicy);
