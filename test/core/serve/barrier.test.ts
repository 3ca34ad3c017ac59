import { expect } from 'chai';
import { responseOf } from '../../../core/serve/barrier';
import { DEFAULT_STRIP_TOKENS } from '../../../core/config/serve-schema';

describe('serve/barrier: the response part of an OpenRLHF query', () => {
  it('drops the prompt prefix and trailing special tokens (repeatedly, with whitespace between)', () => {
    expect(
      responseOf(
        '<|im_start|>user\nQ<|im_end|>\nA: \\boxed{3}<|im_end|>\n<|endoftext|>',
        '<|im_start|>user\nQ<|im_end|>\n',
        DEFAULT_STRIP_TOKENS,
      ),
    ).to.equal('A: \\boxed{3}');
  });
  it('keeps the whole query when it does not start with the prompt', () => {
    expect(responseOf('decoded differently \\boxed{1}</s>', 'Q', DEFAULT_STRIP_TOKENS)).to.equal(
      'decoded differently \\boxed{1}',
    );
    expect(responseOf('x', undefined, [])).to.equal('x');
  });
});
