import { defineCodes } from './spec';

/** Errors of backends that reach real models: OpenAI-compatible servers and ONNX exports. */
export const BACKEND_CODES = defineCodes({
  CORL_ERR_BACKEND_UNREACHABLE: {
    cause: 'An OpenAI-compatible server did not answer (connection refused, reset, or timed out) after every retry.',
    fix: 'check that the server (vLLM, SGLang, llama.cpp) is running at `baseUrl`, or raise `retries`/`timeoutSeconds`',
  },
  CORL_ERR_BACKEND_HTTP: {
    cause:
      'An OpenAI-compatible server answered with an error status (4xx are not retried; 429 and 5xx are, with backoff).',
    fix: "read the server's message in the error; a 404 usually means a wrong `model` name or endpoint",
  },
  CORL_ERR_BACKEND_RESPONSE: {
    cause:
      'An OpenAI-compatible server answered with JSON that lacks the fields the protocol defines (choices, text or message, logprobs).',
    fix: 'use a server that implements /v1/completions or /v1/chat/completions; ask for logprobs only from servers that return them',
  },
  CORL_ERR_BACKEND_AUTH: {
    cause: 'A backend names an environment variable for its API key (`apiKeyEnv`) that is unset or empty.',
    fix: 'export the key in that variable before the run (the key never goes in a config), or drop `apiKeyEnv` for a server without authentication',
  },
  CORL_ERR_BACKEND_UNSUPPORTED: {
    cause:
      'A request needs something the chosen endpoint cannot do, such as images sent to /v1/completions, which takes text only.',
    fix: 'use `endpoint: "chat"` with a vision-language model for problems with images',
  },
  CORL_ERR_BACKEND_MODEL: {
    cause:
      'An ONNX model folder does not have the Hugging Face/optimum causal-LM layout: model.onnx (or onnx/model.onnx), inputs input_ids, attention_mask, position_ids (optional) and float32 past_key_values.{i}.key|value [batch, kv_heads, past, head_dim], outputs logits and present.{i}.key|value, head counts agreeing with config.json.',
    fix: 'export the model with `optimum-cli export onnx --task text-generation-with-past`, or point `path` at a folder with that layout',
  },
  CORL_ERR_BACKEND_TOKENIZER: {
    cause:
      'A model folder has no usable tokenizer.json / tokenizer_config.json, or the tokenizer names no end-of-sequence token.',
    fix: 'copy the tokenizer files of the model next to model.onnx (the Hugging Face export writes them there)',
  },
  CORL_ERR_BACKEND_CONTEXT: {
    cause:
      "A prompt for an ONNX model encodes to no tokens, or to as many tokens as the model's context (`maxContext`, else max_position_embeddings of config.json) or more.",
    fix: 'shorten the prompt (or its `template`), or raise option `maxContext` up to what the model was trained for',
  },
  CORL_ERR_BACKEND_IMAGE: {
    cause: 'A problem names an image that cannot be read or whose type is not PNG, JPEG, GIF or WebP.',
    fix: 'fix the image path (relative paths are resolved against the task file) or convert the image',
  },
});
